// A process that dies without disposing leaves its jobs' processes running; the next process to
// see the session kills them — only those still carrying the job's marker — and tells the model.
// Real processes throughout: detached `sleep`s in their own process groups.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { format } from 'node:util'
import { readProcess } from '@rein/base'
import { MemorySessionStore, type SessionEvent, type SessionStore } from '@rein/session'
import { afterEach, describe, expect, it } from 'vitest'
import type { JobRun } from '../src/index.ts'
import { reapRecorded } from '../src/reaper.ts'
import type { AdapterRequest } from '@rein/llm'
import { defineTool } from '@rein/tools'
import { boot, call, jobStarter, notices, ofType, ownerOf, tick } from './harness.ts'

const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0)) {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // already gone
    }
  }
})

/** A detached `sh -c script` in its own process group, with `env` added; the test keeps its handle. */
function detached(script: string, env: Record<string, string> = {}): ChildProcess {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore', env: { ...process.env, ...env } })
  child.unref()
  children.push(child)
  return child
}

/** Pids of live processes whose environment holds `entry`. */
function carrying(entry: string): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      return readFileSync(`/proc/${name}/environ`, 'utf8').split('\0').includes(entry) ? [Number(name)] : []
    } catch {
      return []
    }
  })
}

/** Pids of live processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number).filter((child) => readProcess(child)?.ppid === pid)
}

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10))
}

/** The process's command name from /proc, '' once it is gone. */
function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return ''
  }
}

/** The process's state letter from /proc (`S` sleeping, `Z` zombie: dead but not yet waited for), or `gone`. */
function stateOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!
  } catch {
    return 'gone'
  }
}

/** What a crash leaves: the durable part of the log, in a store nobody holds. */
async function survivingLog(store: SessionStore, id: string): Promise<MemorySessionStore> {
  const { header, events } = await store.load(id)
  const copy = new MemorySessionStore()
  await copy.create(header)
  await copy.append(id, events)
  await copy.close(id)
  return copy
}

/** The log with each event passed through `change`, in a store nobody holds. */
async function rewritten(store: SessionStore, id: string, change: (event: SessionEvent) => SessionEvent): Promise<MemorySessionStore> {
  const { header, events } = await store.load(id)
  const copy = new MemorySessionStore()
  await copy.create(header)
  await copy.append(id, events.map(change))
  await copy.close(id)
  return copy
}

/** A first process whose `start_job` spawns `script` with a fresh marker and records it; it then crashes (is dropped, never disposed). */
async function crashWithJob(script: string, record: (job: JobRun, child: ChildProcess, marker: string) => Promise<void>) {
  const marker = `REIN_TEST_JOB=${randomUUID()}`
  const spawned: { child?: ChildProcess; recorded?: Promise<void> } = {}
  // The harness disposes it after the test; a body that never returns must not hold that up.
  const first = await boot([[call('start_job', { label: 'sleep 300' })], [{ text: 'started' }]], { jobs: { killGraceMs: 0 } })
  jobStarter(first.root, (job) => {
    const child = detached(script, { [marker.split('=')[0]!]: marker.split('=')[1]! })
    spawned.child = child
    spawned.recorded = record(job, child, marker)
    return new Promise<void>(() => {}) // the process dies before this job ever ends
  })
  const agent = await first.root.agents.create({ sessionId: 'crashed' })
  await agent.send('start it')
  await spawned.recorded
  return { store: await survivingLog(first.store, 'crashed'), child: spawned.child!, marker }
}

describe('reaping what a crashed process left', () => {
  it('kills the recorded process group on the next turn in the session and injects one lost notice', async () => {
    const { store, child, marker } = await crashWithJob('exec sleep 300', async (job, spawned, entry) => {
      await job.record({ marker: entry })
      await job.record({ processGroup: spawned.pid! })
    })
    expect(stateOf(child.pid!)).toMatch(/^[RSD]$/)
    const second = await boot([[{ text: 'noted' }], [{ text: 'again' }]], { store })
    jobStarter(second.root)
    const { agent } = await second.root.agents.resume('crashed')
    const exited = once(child, 'exit')
    await agent.send('where were we?')
    expect(await exited).toEqual([null, 'SIGKILL'])
    expect(carrying(marker)).toEqual([])
    expect(notices(second.llm.requests[0]!.messages)).toEqual([
      'Background job test-1 (sleep 300) was lost: the rein process running it ended without recording how it ended, and any of its processes still running were stopped. [status: killed]',
    ])
    await agent.send('and now?')
    expect(notices(second.llm.requests[1]!.messages)).toHaveLength(1)
    expect(ofType(agent.session.events, 'jobs/end')).toEqual([{ jobId: 'test-1', status: 'killed', cause: 'lost', notice: true }])
  })

  it('says, as a warning any command prints, which jobs of a crashed process it stopped processes of', async () => {
    const { store, child } = await crashWithJob('exec sleep 300', async (job, spawned, entry) => {
      await job.record({ marker: entry, processGroup: spawned.pid! })
    })
    const second = await boot([[{ text: 'noted' }]], { store })
    const warnings: string[] = []
    second.root.logger.exporter({ levels: { default: 3 }, export: (message) => { if (message.type === 'warn') warnings.push(format(...message.args)) } })
    const exited = once(child, 'exit')
    await second.root.agents.resume('crashed')
    second.root.jobs.reap('crashed')
    await exited
    await until(() => warnings.length > 0)
    expect(warnings).toEqual([`session crashed: stopped 1 process that jobs of a process that ended without stopping them had left running (test-1: sleep 300)`])
  })

  it('kills what a job killed just before the crash left running: its end was saved, its processes were still stopping', async () => {
    const { store, child } = await crashWithJob('trap "" TERM; exec sleep 300', async (job, spawned, entry) => {
      await job.record({ marker: entry, processGroup: spawned.pid! })
    })
    // What a kill -9 during job_kill's grace leaves: the end in the log, the process alive.
    const crashed = await store.open('crashed')
    await store.append('crashed', [{ seq: crashed.events.length, time: new Date().toISOString(), type: 'jobs/end', data: { jobId: 'test-1', status: 'killed', cause: 'kill', notice: true }, ignorable: true }])
    await store.close('crashed')
    const second = await boot([[{ text: 'noted' }]], { store })
    jobStarter(second.root)
    const { agent } = await second.root.agents.resume('crashed')
    const exited = once(child, 'exit')
    await agent.send('where were we?')
    expect(await exited).toEqual([null, 'SIGKILL'])
    // Already ended: no second end, no lost notice.
    expect(ofType(agent.session.events, 'jobs/end')).toHaveLength(1)
  })

  it('finds a child that left the process group by the marker in its environment, when asked right at resume', async () => {
    const { store, marker } = await crashWithJob('setsid sleep 300 & sleep 300', async (job, spawned, entry) => {
      await job.record({ marker: entry, processGroup: spawned.pid! })
    })
    await until(() => carrying(marker).length === 3)
    const second = await boot([[{ text: 'noted' }]], { store })
    const { agent } = await second.root.agents.resume('crashed')
    // Right at resume, without waiting for a turn.
    second.root.jobs.reap('crashed')
    await until(() => carrying(marker).length === 0)
    expect(second.llm.requests).toHaveLength(0)
    await agent.send('hi')
    expect(notices(second.llm.requests[0]!.messages)).toHaveLength(1)
  })

  it('kills a recorded group whose processes lost the marker (a title rewritten, env -i) while its leader is the process recorded', async () => {
    const { store, child, marker } = await crashWithJob('exec env -i sleep 300', async (job, spawned, entry) => {
      await job.record({ marker: entry })
      // Until `sleep` runs: before the shell execs, /proc shows the spawning process's environment, without the marker.
      await until(() => readProcess(spawned.pid!)?.group === spawned.pid && commOf(spawned.pid!) === 'sleep' && carrying(entry).length === 0)
      await job.record({ processGroup: spawned.pid! })
    })
    expect(carrying(marker)).toEqual([])
    const second = await boot([[{ text: 'noted' }]], { store })
    const { agent } = await second.root.agents.resume('crashed')
    const exited = once(child, 'exit')
    await agent.send('where were we?')
    expect(await exited).toEqual([null, 'SIGKILL'])
  })

  it('kills a process that cleared its environment in a session a marked process made (setsid sh -c "env -i …")', async () => {
    const pidFile = join(tmpdir(), `rein-reap-${randomUUID()}`)
    const { store, marker } = await crashWithJob(`setsid sh -c 'echo $$ > ${pidFile}; env -i sleep 300; true' & exec sleep 300`, async (job, spawned, entry) => {
      await job.record({ marker: entry, processGroup: spawned.pid! })
    })
    // The inner shell carries the marker; its `sleep` (env -i) does not, and is in the inner shell's own group.
    let sleeper = 0
    await until(() => {
      const inner = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : 0
      sleeper = childrenOf(inner).find((pid) => carrying(marker).includes(inner) && !carrying(marker).includes(pid) && readProcess(pid)?.group === inner) ?? 0
      return sleeper > 0
    })
    try {
      const second = await boot([[{ text: 'noted' }]], { store })
      await second.root.agents.resume('crashed')
      second.root.jobs.reap('crashed')
      await until(() => carrying(marker).length === 0 && /^(gone|Z)$/.test(stateOf(sleeper)))
      expect(stateOf(sleeper)).toMatch(/^(gone|Z)$/)
    } finally {
      try {
        process.kill(sleeper, 'SIGKILL')
      } catch {
        // gone, as it should be
      }
      rmSync(pidFile, { force: true })
    }
  })

  it('leaves a recorded group alone when no process in it carries the marker any more (the id was reused)', async () => {
    const stranger = detached('exec sleep 300')
    // The job's own process carries the marker (in its own group); the recorded group is the stranger's.
    const { store: logged, child } = await crashWithJob('exec sleep 300', async (job, _spawned, entry) => {
      await job.record({ marker: entry, processGroup: stranger.pid! })
    })
    // The recorded leader was another process that had this pid then: it started at another time.
    const store = await rewritten(logged, 'crashed', (event) => {
      const data = event.data as Record<string, unknown>
      return event.type === 'jobs/record' && typeof data.leaderStart === 'number' ? { ...event, data: { ...data, leaderStart: data.leaderStart - 1 } } : event
    })
    const second = await boot([[{ text: 'noted' }]], { store })
    const { agent } = await second.root.agents.resume('crashed')
    const exited = once(child, 'exit')
    await agent.send('hi')
    // Both would be signalled in the same pass: once the marked one is gone, the stranger's fate is known.
    await exited
    expect(stateOf(stranger.pid!)).toMatch(/^[RSD]$/)
    expect(notices(second.llm.requests[0]!.messages)).toHaveLength(1)
  })

  it('names where the lost job\'s output is saved in its notice', async () => {
    // The harness disposes it after the test; a body that never returns must not hold that up.
    const first = await boot([[call('start_job', { label: 'watch' })], [{ text: 'started' }]], { jobs: { killGraceMs: 0 } })
    jobStarter(first.root, () => new Promise<void>(() => {}), { outputPath: '/sessions/crashed/spill/watch.txt' })
    const agent = await first.root.agents.create({ sessionId: 'crashed' })
    await agent.send('watch')
    const store = await survivingLog(first.store, 'crashed')
    const second = await boot([[{ text: 'noted' }]], { store })
    const { agent: resumed } = await second.root.agents.resume('crashed')
    await resumed.send('where were we?')
    expect(notices(second.llm.requests[0]!.messages)).toEqual([
      'Background job test-1 (watch) was lost: the rein process running it ended without recording how it ended, and any of its processes still running were stopped. Its output up to then is saved at /sessions/crashed/spill/watch.txt. [status: killed]',
    ])
  })

  it('warns of a missing marker only for a job that recorded processes without one, not for one with none to record (an in-process subagent)', async () => {
    const first = await boot([[call('start_job', { label: 'quiet' }), call('start_job', { label: 'grouped' })], [{ text: 'started' }]], { jobs: { killGraceMs: 0 } })
    jobStarter(first.root, async (job) => {
      if (job.jobId === 'test-2') await job.record({ processGroup: 2 ** 22 + 1 })
      await new Promise<void>(() => {})
    })
    const agent = await first.root.agents.create({ sessionId: 'crashed' })
    await agent.send('start both')
    const store = await survivingLog(first.store, 'crashed')
    const second = await boot([[{ text: 'noted' }]], { store })
    const warnings: string[] = []
    second.root.logger.exporter({ levels: { default: 3 }, export: (message) => { if (message.type === 'warn') warnings.push(message.args.map(String).join(' ')) } })
    await second.root.agents.resume('crashed')
    second.root.jobs.reap('crashed')
    expect(warnings.filter((warning) => warning.includes('recorded no marker'))).toEqual([expect.stringContaining('test-2')])
  })

  it('continues the numbering after the lost job', async () => {
    const { store } = await crashWithJob('exit 0', async (job, _spawned, entry) => job.record({ marker: entry }))
    const second = await boot([[call('start_job', { label: 'next' })], [{ text: 'ok' }]], { store })
    jobStarter(second.root)
    const { agent } = await second.root.agents.resume('crashed')
    await agent.send('again')
    expect(ofType(agent.session.events, 'jobs/start').map((start) => start.jobId)).toEqual(['test-1', 'test-2'])
  })

  it('refuses a record that could signal everything (group 0 or 1) or names no environment entry', async () => {
    const first = await boot([])
    const bodies = jobStarter(first.root)
    const agent = await first.root.agents.create()
    first.root.jobs.start({ kind: 'test', label: 'x', owner: { agent: 'main', sessionId: agent.session.id, conversationId: agent.session.id, runId: 'r', turnId: 't', anchor: 'a', depth: 0 }, run: (job) => { bodies.set(job.jobId, job) } })
    const job = bodies.get('test-1')!
    for (const details of [{ processGroup: 1 }, { processGroup: 0 }, { processGroup: -5 }, { marker: 'no equals sign' }, { marker: 'A=b\0c' }]) {
      await expect(job.record(details)).rejects.toMatchObject({ code: 'JOB_INVALID_RECORD' })
    }
  })

  it('leaves alone the group a marked process only stayed in (whoever started rein), killing the marked process and its unmarked child', async () => {
    const marker = `REIN_REAP_TEST=${randomUUID()}`
    const [name, value] = marker.split('=') as [string, string]
    // The leader (this `sh`, then `sleep`) is no job's; the marked `sh` in its group is, with its `env -i` child.
    const bystander = detached(`${name}=${value} sh -c 'env -i sleep 300 & wait' & exec sleep 300`)
    let inner = 0
    let cleared = 0
    await until(() => {
      inner = carrying(marker)[0] ?? 0
      cleared = inner === 0 ? 0 : childrenOf(inner).find((pid) => !carrying(marker).includes(pid) && /sleep/.test(commOf(pid))) ?? 0
      return cleared > 0 && /sleep/.test(commOf(bystander.pid!))
    })
    expect(readProcess(inner)?.group).toBe(bystander.pid)
    const report = reapRecorded([{ marker }])
    expect(report.groups).toEqual([])
    await until(() => /^(gone|Z)$/.test(stateOf(inner)) && /^(gone|Z)$/.test(stateOf(cleared)))
    expect(stateOf(bystander.pid!)).toMatch(/^[RSD]$/)
  })

  it('kills nothing without a marker, and nothing where the process table cannot be read', () => {
    const child = detached('exec sleep 300')
    expect(reapRecorded([{ processGroup: child.pid! }])).toEqual({ pids: [], groups: [], hit: [], checked: false })
    expect(reapRecorded([{ processGroup: child.pid!, marker: 'A=b' }], { proc: '/nonexistent' })).toEqual({ pids: [], groups: [], hit: [], checked: false })
    expect(stateOf(child.pid!)).toMatch(/^[RSD]$/)
  })
})

/** A store whose `load` of one session waits until the test lets it go: the window while jobs reads a child's log. */
class HeldLoadStore extends MemorySessionStore {
  private readonly gates = new Map<string, Promise<void>>()

  /** Holds every `load(id)` until the returned function is called. */
  hold(id: string): () => void {
    let release: () => void = () => {}
    this.gates.set(id, new Promise<void>((resolve) => { release = resolve }))
    return release
  }

  override async load(id: string) {
    await this.gates.get(id)
    return super.load(id)
  }
}

/** Copies the sessions `ids` of `from`, as a crash left them, into a store nobody holds. */
async function copyInto(to: MemorySessionStore, from: SessionStore, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    const { header, events } = await from.load(id)
    await to.create(header)
    await to.append(id, events)
    await to.close(id)
  }
}

/**
 * A first process whose `delegate` starts a `subagent` job (ref: a child session below the owner's)
 * that runs a child agent to a completed answer and then never ends: the process dies before the
 * job's end is logged. Returns the store and the child's session id.
 */
async function crashAfterChildFinished() {
  // The child's model answers its task; the owner's delegates, then ends its turn.
  const first = await boot((request: AdapterRequest) => {
    const task = request.messages.find((message) => message.role === 'user')?.content[0]
    if (task?.type === 'text' && task.text === 'dig') return [{ text: 'Found it under the third stone.' }]
    return request.messages.some((message) => message.role === 'assistant') ? [{ text: 'started' }] : [call('delegate', {})]
  }, { jobs: { killGraceMs: 0 } })
  let childDone: () => void = () => {}
  const finished = new Promise<void>((resolve) => { childDone = resolve })
  let childId = ''
  first.root.tools.register(defineTool({
    name: 'delegate',
    description: 'Runs a child agent in the background.',
    parameters: {},
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: async (_args, run) => {
      const child = await first.root.agents.create({ parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } })
      childId = child.session.id
      return first.root.jobs.start({
        kind: 'subagent', label: 'dig', owner: run.identity!, ref: child.session.id,
        run: async () => {
          await child.send('dig')
          await child.close()
          childDone()
          return new Promise<void>(() => {}) // the process dies before this job's end is logged
        },
      }).jobId
    },
  }))
  const agent = await first.root.agents.create({ sessionId: 'crashed' })
  await agent.send('delegate the digging')
  await finished
  await agent.session.flush()
  const store = new HeldLoadStore()
  await copyInto(store, first.store, ['crashed', childId])
  return { store, childId }
}

describe('reaping a job whose work was done in a child session', () => {
  it('a reaped job whose child finished does not read killed while its child\'s log is being read', async () => {
    const { store, childId } = await crashAfterChildFinished()
    const release = store.hold(childId)
    const second = await boot([[{ text: 'noted' }]], { store })
    const { agent } = await second.root.agents.resume('crashed')
    second.root.jobs.reap('crashed')
    await tick()
    // The child's log is still being read: how the job ended is not known yet, so no end may be given.
    const during = second.root.jobs.read('subagent-1', ownerOf(agent))
    expect(during).toMatchObject({ info: { jobId: 'subagent-1', status: 'running', earlier: true }, output: '' })
    expect(during.info).not.toHaveProperty('cause')
    expect(during.info).not.toHaveProperty('endedAt')
    release()
    expect(await second.root.jobs.wait('subagent-1', 0, ownerOf(agent))).toMatchObject({ status: 'done', earlier: true })
    const after = second.root.jobs.read('subagent-1', ownerOf(agent))
    expect(after).toMatchObject({ info: { status: 'done', earlier: true }, output: expect.stringContaining('Found it under the third stone.') })
    await agent.close()
  })

  it('job_output cancelled while the child\'s log is being read answers that it was cancelled, not a status', async () => {
    const { store, childId } = await crashAfterChildFinished()
    const release = store.hold(childId)
    const second = await boot([[{ text: 'noted' }]], { store })
    const { agent } = await second.root.agents.resume('crashed')
    second.root.jobs.reap('crashed')
    const cancel = new AbortController()
    const context = { identity: ownerOf(agent), sessionId: agent.session.id }
    const answer = second.root.tools.execute({ callId: 'c', name: 'job_output', arguments: JSON.stringify({ job_id: 'subagent-1' }), signal: cancel.signal, context })
    await tick()
    cancel.abort()
    expect((await answer).content).toEqual([{ type: 'text', text: expect.stringMatching(/^Error: job_output was cancelled while it waited for subagent-1\b/) }])
    release()
    expect(await second.root.jobs.wait('subagent-1', 0, ownerOf(agent))).toMatchObject({ status: 'done' })
    await agent.close()
  })
})
