// A signal at any moment stops what rein started: no command it ran is left behind, whether the
// signal comes once or twice, is SIGINT, SIGTERM or SIGHUP, or arrives while rein waits for jobs.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ChildProcessByStdio } from 'node:child_process'
import type { Readable } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import type { MockReply } from '@rein/testkit'
import { FIXTURES, projectPerTest, spawnRein } from './harness.ts'

const setUp = projectPerTest(afterEach)
const JOB_ROWS = ["- { id: jobs, name: '@rein/jobs' }", "- { id: bash, name: '@rein/tool-bash' }"]

function bash(command: string, background = false): MockReply {
  return { steps: [{ text: 'Working.\n' }, { toolCall: { id: 'c_bash', name: 'bash', arguments: JSON.stringify({ command, description: 'work', ...(background ? { run_in_background: true } : {}) }) } }] }
}

/** Processes (not zombies) whose command line holds `token`. */
function processesWith(token: string): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).flatMap((pid) => {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      const zombie = /^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'))
      return cmdline.includes(token) && !zombie ? [Number(pid)] : []
    } catch {
      return []
    }
  })
}

/** Once `file` exists (the command started), sends `signals` to rein, one per 100 ms. */
function signalWhenStarted(file: string, signals: NodeJS.Signals[]) {
  let started = false
  return (_text: string, _kill: () => void, child: ChildProcessByStdio<null, Readable, Readable>) => {
    if (started) return
    started = true
    const poll = setInterval(() => {
      if (!existsSync(file)) return
      clearInterval(poll)
      signals.forEach((signal, index) => setTimeout(() => child.kill(signal), 100 * index))
    }, 20)
  }
}

describe('signals stop everything rein started', () => {
  const cases = [['SIGHUP'], ['SIGTERM'], ['SIGINT', 'SIGINT']] as NodeJS.Signals[][]
  cases.forEach((signals, index) => {
    it(`leaves no command running after ${signals.join(' then ')} during a foreground call that ignores SIGTERM`, async () => {
      // The sleep's own argument is the token: bash may exec it, so nothing else carries it.
      const token = `30${index}.${process.pid}`
      const p = await setUp([bash(`touch started; trap '' TERM; sleep ${token}; true`), { steps: [{ text: 'never' }] }], { extraRows: JOB_ROWS })
      const run = await spawnRein(p.dir, ['run', '--yes', 'work'], signalWhenStarted(join(p.dir, 'started'), signals), { REIN_HOME: p.home })
      expect(run.code === null ? run.signal : run.code).not.toBe(0)
      expect(processesWith(token)).toEqual([])
    })
  })

  it('gives the load up with exit 130 on SIGTERM while a row is still starting, rather than dying by the signal', async () => {
    // `loading` is made in rein's folder, the project's, as the row begins to start.
    const p = await setUp([{ steps: [{ text: 'never' }] }], { extraRows: [`- { id: slow, name: '${join(FIXTURES, 'slow-start.mjs')}', config: { started: loading } }`] })
    // Polled from the spawn: nothing is printed while the rows start.
    const signal = signalWhenStarted(join(p.dir, 'loading'), ['SIGTERM'])
    const run = await spawnRein(p.dir, ['run', 'hi'], undefined, { REIN_HOME: p.home }, [], (child) => signal('', () => {}, child))
    expect({ code: run.code, signal: run.signal }).toEqual({ code: 130, signal: null })
    expect(run.stderr).toContain('SIGTERM: stopping the composition\'s load (nothing ran); press Ctrl-C again to quit without waiting\n')
    expect(p.server.requests).toHaveLength(0)
  })

  it('stops and records a background job when SIGTERM arrives while rein waits for it', async () => {
    const token = `309.${process.pid}`
    const p = await setUp([bash(`touch started; sleep ${token}; true`, true), { steps: [{ text: 'Started.' }] }], { extraRows: JOB_ROWS })
    let sent = false
    const run = await spawnRein(p.dir, ['run', '--yes', 'work'], (text, _kill, child) => {
      if (sent || !text.includes('Started.')) return
      sent = true
      setTimeout(() => child.kill('SIGTERM'), 200)
    }, { REIN_HOME: p.home })
    expect(run.code).toBe(130)
    expect(run.stderr).toContain('waiting for 1 background job (bash-1)')
    // The turn had ended: the signal stops the wait, and says so, not that it interrupts a turn.
    expect(run.stderr).toContain('SIGTERM: stopping the wait (bash-1 stopped, the session saved)')
    expect(run.stderr).not.toContain('the turn is interrupted')
    expect(run.stderr).toContain('stopped bash-1')
    expect(processesWith(token)).toEqual([])
    const [log] = readdirSync(join(p.home, 'sessions')).filter((name) => name.endsWith('.jsonl'))
    expect(readFileSync(join(p.home, 'sessions', log!), 'utf8')).toContain('"type":"jobs/end"')
  })
})

describe('SIGTERM under a subagent call', () => {
  /** Each stored session's header and events, by depth. */
  function logs(home: string) {
    const folder = join(home, 'sessions')
    return readdirSync(folder).filter((name) => name.endsWith('.jsonl')).map((name) => {
      const [header, ...events] = readFileSync(join(folder, name), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; depth: number; type: string; data: Record<string, unknown> })
      return { header: header!, events }
    }).sort((a, b) => a.header.depth - b.header.depth)
  }

  it('leaves the child to be continued exactly once by rein resume, not cancelled', async () => {
    const token = `310.${process.pid}`
    const p = await setUp([
      // Text first: the signal is sent once stdout shows something and the child's command started.
      { steps: [{ text: 'Delegating.\n' }, { toolCall: { id: 'c_sub', name: 'subagent', arguments: JSON.stringify({ description: 'dig', prompt: 'dig' }) } }] },
      bash(`touch started; sleep ${token}; true`),
      { steps: [{ text: 'The child finished.' }] },
      { steps: [{ text: 'Parent done.' }] },
    ], { extraRows: [...JOB_ROWS, "- { id: subagents, name: '@rein/subagents' }"] })
    const run = await spawnRein(p.dir, ['run', '--yes', 'work'], signalWhenStarted(join(p.dir, 'started'), ['SIGTERM']), { REIN_HOME: p.home })
    expect(run.code).toBe(130)
    expect(run.stderr).toContain('the turn is interrupted, for rein resume to continue')
    expect(run.stderr).toContain('[tool] Subagent: dig interrupted: rein resume continues it')
    expect(processesWith(token)).toEqual([])
    const [parent, child] = logs(p.home)
    // The call is left open for resume, as after a crash; the child's log says interrupted.
    expect(parent!.events.some((event) => event.type === 'tool/result' && event.data.callId === 'c_sub')).toBe(false)
    expect(child!.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'interrupted' } })

    const resumed = await spawnRein(p.dir, ['resume', parent!.header.id], undefined, { REIN_HOME: p.home })
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toContain('Parent done.')
    expect(resumed.stderr).toContain('subagent (c_sub): its tool settled it (it finished')
    const [after, childAfter] = logs(p.home)
    const results = after!.events.filter((event) => event.type === 'tool/result' && event.data.callId === 'c_sub')
    expect(results).toHaveLength(1)
    expect(JSON.stringify(results[0]!.data)).toContain('The child finished.')
    expect(childAfter!.events.filter((event) => event.type === 'turn/start')).toHaveLength(2)
    expect(childAfter!.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'completed' } })
    expect(p.server.requests).toHaveLength(4)
  }, 60_000)
  it('exits 130 when a signal stops rein resume while it continues the child, and the next resume finishes it', async () => {
    const token = `311.${process.pid}`
    const p = await setUp([
      { steps: [{ text: 'Delegating.\n' }, { toolCall: { id: 'c_sub', name: 'subagent', arguments: JSON.stringify({ description: 'dig', prompt: 'dig' }) } }] },
      bash(`touch started; sleep ${token}; true`),
      // The child's continuation under the first resume: stopped by the signal as it runs.
      bash(`touch again; sleep ${token}; true`),
      { steps: [{ text: 'The child finished.' }] },
      { steps: [{ text: 'Parent done.' }] },
    ], { extraRows: [...JOB_ROWS, "- { id: subagents, name: '@rein/subagents' }"] })
    const run = await spawnRein(p.dir, ['run', '--yes', 'work'], signalWhenStarted(join(p.dir, 'started'), ['SIGTERM']), { REIN_HOME: p.home })
    expect(run.code).toBe(130)
    const parentId = logs(p.home)[0]!.header.id

    // The resume prints nothing on stdout while the child works: the wait starts at the spawn.
    const signal = signalWhenStarted(join(p.dir, 'again'), ['SIGTERM'])
    const stopped = await spawnRein(p.dir, ['resume', '--yes', parentId], undefined, { REIN_HOME: p.home }, [], (child) => signal('', () => {}, child))
    expect(stopped.code).toBe(130)
    expect(stopped.stderr).toContain(`the repair of session ${parentId} was stopped before it finished`)
    expect(processesWith(token)).toEqual([])
    expect(logs(p.home)[0]!.events.some((event) => event.type === 'tool/result' && event.data.callId === 'c_sub')).toBe(false)

    const resumed = await spawnRein(p.dir, ['resume', '--yes', parentId], undefined, { REIN_HOME: p.home })
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toContain('Parent done.')
    const results = logs(p.home)[0]!.events.filter((event) => event.type === 'tool/result' && event.data.callId === 'c_sub')
    expect(results).toHaveLength(1)
    expect(JSON.stringify(results[0]!.data)).toContain('The child finished.')
  }, 60_000)
})
