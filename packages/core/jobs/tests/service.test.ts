// ctx.jobs on its own terms: starting, numbering, settlement, the bounded buffer, who sees a job,
// and how jobs end with a kill, their owner, the plugin and the process.
import { format } from 'node:util'
import type { Agent } from '@rein/agent'
import { hasListeners } from '@rein/base'
import { MemorySessionStore } from '@rein/session'
import { describe, expect, it } from 'vitest'
import type { JobRun, StartJob } from '../src/index.ts'
import { boot, ofType, ownerOf, tick } from './harness.ts'

type Root = Awaited<ReturnType<typeof boot>>['root']

/** Starts a `test` job whose body waits for its signal unless `body` says otherwise; returns the handle and the body's job. */
function startJob(root: Root, agent: Agent, options: Partial<StartJob> = {}) {
  const ref: { job?: JobRun } = {}
  const handle = root.jobs.start({
    kind: 'test',
    label: 'a test job',
    owner: ownerOf(agent),
    run: (job) => {
      ref.job = job
      return new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()))
    },
    ...options,
  })
  return { handle, body: () => ref.job! }
}

describe('start', () => {
  it('numbers jobs <kind>-<n> within the session and returns a handle whose JSON is {kind, jobId}', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const first = startJob(root, agent).handle
    const second = startJob(root, agent).handle
    const other = startJob(root, agent, { kind: 'build' }).handle
    expect([first.jobId, second.jobId, other.jobId]).toEqual(['test-1', 'test-2', 'build-1'])
    expect(JSON.parse(JSON.stringify(first))).toEqual({ kind: 'background', jobId: 'test-1' })
    expect({ ...first }).toEqual({ kind: 'background', jobId: 'test-1' })
    expect(ofType(agent.session.events, 'jobs/start')).toEqual([
      { jobId: 'test-1', kind: 'test', label: 'a test job' },
      { jobId: 'test-2', kind: 'test', label: 'a test job' },
      { jobId: 'build-1', kind: 'build', label: 'a test job' },
    ])
    expect(agent.session.events.every((event) => !event.type.startsWith('jobs/') || event.ignorable)).toBe(true)
  })

  it('rejects a start whose caller was already cancelled, before the body runs', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const controller = new AbortController()
    controller.abort()
    let ran = false
    expect(() => startJob(root, agent, { signal: controller.signal, run: () => { ran = true } })).toThrow(expect.objectContaining({ code: 'JOB_START_ABORTED' }))
    expect(ran).toBe(false)
    expect(root.jobs.list(ownerOf(agent))).toEqual([])
  })

  it('rejects a start for a session no live agent owns (never created, or closed), before the body runs', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    let ran = false
    const run = () => { ran = true }
    expect(() => root.jobs.start({ kind: 'test', label: 'x', owner: { ...ownerOf(agent), sessionId: 'nobody' }, run })).toThrow(expect.objectContaining({ code: 'JOB_OWNER_GONE' }))
    await agent.close()
    expect(() => root.jobs.start({ kind: 'test', label: 'x', owner: ownerOf(agent), run })).toThrow(expect.objectContaining({ code: 'JOB_OWNER_GONE' }))
    expect(ran).toBe(false)
  })

  it('rejects a malformed start with JOB_INVALID, saying what is wrong', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    expect(() => startJob(root, agent, { kind: 'Bad Kind' })).toThrow(expect.objectContaining({ code: 'JOB_INVALID', message: expect.stringContaining('"Bad Kind"') }))
    expect(() => startJob(root, agent, { label: 42 as unknown as string })).toThrow(expect.objectContaining({ code: 'JOB_INVALID' }))
    expect(() => startJob(root, agent, { run: undefined as unknown as StartJob['run'] })).toThrow(expect.objectContaining({ code: 'JOB_INVALID' }))
    expect(() => startJob(root, agent, { owner: undefined as unknown as StartJob['owner'] })).toThrow(expect.objectContaining({ code: 'JOB_INVALID' }))
  })

  it('refuses a ref or an outputPath that is not a string with JOB_INVALID, before any job is listed or its body runs', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    let ran = false
    const run = () => { ran = true }
    for (const bad of [{ ref: 42 }, { ref: { id: 1 } }, { outputPath: 5 }, { outputPath: '' }]) {
      expect(() => startJob(root, agent, { run, ...bad } as Partial<StartJob>)).toThrow(expect.objectContaining({ code: 'JOB_INVALID' }))
    }
    expect(ran).toBe(false)
    expect(root.jobs.list(ownerOf(agent))).toEqual([])
  })

  it('refuses list, read, kill and wait without a viewer with JOB_INVALID, not a TypeError', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const { handle } = startJob(root, agent)
    for (const viewer of [undefined, {}, { sessionId: 7 }] as unknown as Parameters<typeof root.jobs.list>[0][]) {
      expect(() => root.jobs.list(viewer)).toThrow(expect.objectContaining({ code: 'JOB_INVALID', message: expect.stringContaining('viewer') }))
      expect(() => root.jobs.read(handle.jobId, viewer)).toThrow(expect.objectContaining({ code: 'JOB_INVALID' }))
      await expect(root.jobs.kill(handle.jobId, viewer)).rejects.toMatchObject({ code: 'JOB_INVALID' })
      await expect(root.jobs.wait(handle.jobId, 10, viewer)).rejects.toMatchObject({ code: 'JOB_INVALID' })
    }
  })

  it('cuts a long label to one line of at most 200 characters', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const { handle } = startJob(root, agent, { label: `line one\nline two ${'x'.repeat(500)}` })
    const [info] = root.jobs.list(ownerOf(agent))
    expect(info!.jobId).toBe(handle.jobId)
    expect(info!.label).toHaveLength(200)
    expect(info!.label.startsWith('line one line two x')).toBe(true)
  })

  it('continues the numbering from the log when the session is resumed, here and in a new process', async () => {
    const store = new MemorySessionStore()
    const first = await boot([], { store })
    const agent = await first.root.agents.create({ sessionId: 'numbered' })
    startJob(first.root, agent)
    startJob(first.root, agent)
    await agent.close()
    const { agent: resumed } = await first.root.agents.resume('numbered')
    expect(startJob(first.root, resumed).handle.jobId).toBe('test-3')
    await resumed.close()
    // A new process: a fresh stack reading the same log.
    const second = await boot([], { store })
    const { agent: again } = await second.root.agents.resume('numbered')
    expect(startJob(second.root, again).handle.jobId).toBe('test-4')
  })
})

describe('settlement', () => {
  it('keeps the first settlement and ignores the rest', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const { handle, body } = startJob(root, agent)
    body().fail(new Error('first'))
    body().done({ exitCode: 0 })
    body().fail(new Error('second'))
    expect(await handle.done).toMatchObject({ status: 'failed', error: 'first' })
    const other = startJob(root, agent)
    other.body().done({ exitCode: 3 })
    await root.jobs.kill(other.handle.jobId, ownerOf(agent))
    expect(await other.handle.done).toMatchObject({ status: 'done', exitCode: 3 })
    expect(root.jobs.list(ownerOf(agent)).map((info) => info.status)).toEqual(['failed', 'done'])
  })

  it('never rejects done: a body that throws or rejects fails the job, one that returns is done', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const thrown = startJob(root, agent, { run: () => { throw new Error('cannot start') } }).handle
    const rejected = startJob(root, agent, { run: async () => { throw new TypeError('late') } }).handle
    const returned = startJob(root, agent, { run: async () => {} }).handle
    expect(await thrown.done).toMatchObject({ status: 'failed', error: 'cannot start' })
    expect(await rejected.done).toMatchObject({ status: 'failed', error: 'late' })
    const done = await returned.done
    expect(done).toMatchObject({ status: 'done' })
    expect(done.exitCode).toBeUndefined()
  })

  it('fails a job whose body throws or rejects with anything, even a value no string can be made of, and keeps the reason short', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const unprintable = Object.create(null) as object
    const hostile = { toString: () => { throw new Error('no') } }
    const values: unknown[] = [unprintable, hostile, undefined, new Error('x'.repeat(200_000))]
    for (const value of values) {
      const thrown = startJob(root, agent, { run: () => { throw value } }).handle
      const rejected = startJob(root, agent, { run: async () => { throw value } }).handle
      for (const handle of [thrown, rejected]) {
        const ended = await handle.done
        expect(ended.status).toBe('failed')
        expect(typeof ended.error).toBe('string')
        expect(ended.error!.length).toBeLessThanOrEqual(2000)
      }
    }
    const plain = startJob(root, agent, { run: async () => { throw { code: 'X', message: 'plain object' } } }).handle
    expect((await plain.done).error).toContain('plain object')
  })

  it('records how a job ended in its owner\'s log and makes it durable', async () => {
    const { root, store } = await boot([])
    const agent = await root.agents.create({ sessionId: 'ends' })
    const { handle, body } = startJob(root, agent)
    body().done({ exitCode: 2, signal: null })
    await handle.done
    await tick()
    const { events } = await store.load('ends')
    expect(ofType(events, 'jobs/end')).toEqual([{ jobId: 'test-1', status: 'done', exitCode: 2, notice: true }])
  })

  it('says how much of a result too long to keep was cut, keeping its end, whole characters only', async () => {
    const { root } = await boot([], { jobs: { bufferChars: 1_000 } })
    const agent = await root.agents.create()
    // Two lengths of different parity: one of them puts the cut inside a pair.
    const wholes = ['😀'.repeat(600), `a${'😀'.repeat(600)}`]
    for (const whole of wholes) {
      const { handle, body } = startJob(root, agent)
      body().done({ result: whole })
      await handle.done
    }
    const kept = ofType(agent.session.events, 'jobs/end').map((end) => ({ result: end.result as string, cut: end.resultCut as number }))
    expect(kept).toHaveLength(2)
    for (const [index, { result, cut }] of kept.entries()) {
      const whole = wholes[index]!
      expect({ fits: result.length <= 1_000, wellFormed: result.match(/\p{Cs}/u) === null, tail: result.length >= 999 && whole.endsWith(result) }).toEqual({ fits: true, wellFormed: true, tail: true })
      expect(result.length + cut).toBe(whole.length)
    }
  })

  it('keeps at most bufferLines lines of a result, as of the output, so it reads the same live and from the log', async () => {
    const { root } = await boot([], { jobs: { bufferLines: 10 } })
    const agent = await root.agents.create()
    const { handle, body } = startJob(root, agent)
    const whole = Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join('')
    body().output(whole)
    body().done({ result: whole })
    await handle.done
    const kept = Array.from({ length: 10 }, (_, i) => `line ${i + 21}\n`).join('')
    expect(root.jobs.read(handle.jobId, ownerOf(agent))).toMatchObject({ output: kept, droppedChars: whole.length - kept.length })
    expect(ofType(agent.session.events, 'jobs/end')).toMatchObject([{ result: kept, resultCut: whole.length - kept.length }])
  })

  it('ignores output once the job ended', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const { handle, body } = startJob(root, agent)
    body().output('before\n')
    body().done({ exitCode: 0 })
    body().output('after\n')
    expect(root.jobs.read(handle.jobId, ownerOf(agent)).output).toBe('before\n')
  })
})

describe('read', () => {
  it('returns only the output not read before', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const { handle, body } = startJob(root, agent)
    body().output('one\n')
    body().output('two\n')
    expect(root.jobs.read(handle.jobId, ownerOf(agent))).toMatchObject({ output: 'one\ntwo\n', droppedChars: 0, info: { status: 'running', unreadChars: 0 } })
    expect(root.jobs.read(handle.jobId, ownerOf(agent)).output).toBe('')
    body().output('three\n')
    expect(root.jobs.read(handle.jobId, ownerOf(agent)).output).toBe('three\n')
  })

  it('keeps at most bufferChars unread characters, dropping the oldest, and says how many went', async () => {
    const { root } = await boot([], { jobs: { bufferChars: 1_000 } })
    const agent = await root.agents.create()
    const { handle, body } = startJob(root, agent)
    for (let i = 0; i < 30; i++) body().output(`${String(i).padStart(2, '0')}${'.'.repeat(47)}\n`)
    expect(root.jobs.list(ownerOf(agent))[0]).toMatchObject({ unreadChars: 1_000, droppedChars: 500 })
    const read = root.jobs.read(handle.jobId, ownerOf(agent))
    expect(read.droppedChars).toBe(500)
    expect(read.output).toHaveLength(1_000)
    expect(read.output.startsWith('10.')).toBe(true)
    expect(read.output.endsWith(`29${'.'.repeat(47)}\n`)).toBe(true)
    expect(root.jobs.read(handle.jobId, ownerOf(agent))).toMatchObject({ output: '', droppedChars: 0 })
  })

  it('says how the output file stopped keeping the whole output once its producer says so, on one line, and only for a job with a file that has not ended', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const filed = startJob(root, agent, { outputPath: '/tmp/out.txt' })
    expect(root.jobs.list(ownerOf(agent))[0]).not.toHaveProperty('outputFileNote')
    filed.body().outputFileCut('first')
    filed.body().outputFileCut(`only its first\n4 KiB ${'x'.repeat(500)}`)
    const note = root.jobs.read(filed.handle.jobId, ownerOf(agent)).info.outputFileNote ?? ''
    expect(note.startsWith('only its first 4 KiB x')).toBe(true)
    expect(note.length).toBeLessThanOrEqual(200)
    filed.body().done({})
    filed.body().outputFileCut('after the end')
    expect((await filed.handle.done).outputFileNote).toBe(note)
    const fileless = startJob(root, agent)
    fileless.body().outputFileCut('no file to speak of')
    expect(root.jobs.read(fileless.handle.jobId, ownerOf(agent)).info).not.toHaveProperty('outputFileNote')
  })

  it('shows the line a producer holds back after the output without consuming it, replaced, cleared, cut to its end, and kept as it was when the job was killed', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const { handle, body } = startJob(root, agent)
    body().output('begun\n')
    let line = '10%'
    body().pending(() => line)
    line = '20%'
    expect(root.jobs.read(handle.jobId, ownerOf(agent))).toMatchObject({ output: 'begun\n', pending: '20%', info: { unreadChars: 0 } })
    expect(root.jobs.read(handle.jobId, ownerOf(agent))).toMatchObject({ output: '', pending: '20%' })
    line = ''
    expect(root.jobs.read(handle.jobId, ownerOf(agent))).not.toHaveProperty('pending')
    line = `${'a'.repeat(70_000)}${'b'.repeat(300)}`
    const long = root.jobs.read(handle.jobId, ownerOf(agent)).pending ?? ''
    expect(long.length).toBeLessThanOrEqual(400)
    expect(long.endsWith('b'.repeat(300))).toBe(true)
    line = '90%'
    await root.jobs.kill(handle.jobId, ownerOf(agent))
    line = '100%'
    body().pending(() => 'registered after the end')
    expect(root.jobs.read(handle.jobId, ownerOf(agent)).pending).toBe('90%')
  })

  it('asks its producer for the held line only when the output is read and once as the job ends, never per output chunk', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const { handle, body } = startJob(root, agent)
    let asked = 0
    let line = ''
    body().pending(() => {
      asked++
      return line
    })
    for (let i = 0; i <= 1_000; i++) {
      line = `${'x'.repeat(60_000)} ${i}%`
      body().output('.')
    }
    expect(asked).toBe(0)
    expect(root.jobs.read(handle.jobId, ownerOf(agent)).pending?.endsWith(' 1000%')).toBe(true)
    expect(asked).toBe(1)
    // A later registration replaces the first.
    body().pending(() => 'replaced')
    expect(root.jobs.read(handle.jobId, ownerOf(agent)).pending).toBe('replaced')
    expect(asked).toBe(1)
    body().pending(() => {
      asked++
      return 'last'
    })
    body().done({})
    await handle.done
    expect(asked).toBe(2)
    expect(root.jobs.read(handle.jobId, ownerOf(agent)).pending).toBe('last')
    expect(root.jobs.read(handle.jobId, ownerOf(agent)).pending).toBe('last')
    expect(asked).toBe(2)
  })

  it('shows no held line, and still reads, when the producer\'s getter throws or gives no string', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const { handle, body } = startJob(root, agent)
    body().output('out\n')
    body().pending(() => { throw new Error('broken getter') })
    expect(root.jobs.read(handle.jobId, ownerOf(agent))).toMatchObject({ output: 'out\n' })
    expect(root.jobs.read(handle.jobId, ownerOf(agent))).not.toHaveProperty('pending')
    body().pending((() => 42) as unknown as () => string)
    expect(root.jobs.read(handle.jobId, ownerOf(agent))).not.toHaveProperty('pending')
    body().pending('a string is no getter' as unknown as () => string)
    expect(root.jobs.read(handle.jobId, ownerOf(agent))).not.toHaveProperty('pending')
    // Asked once more as the job ends: a throw there must not stop the kill.
    body().pending(() => { throw new Error('broken at the end') })
    await root.jobs.kill(handle.jobId, ownerOf(agent))
    expect(root.jobs.read(handle.jobId, ownerOf(agent))).toMatchObject({ info: { status: 'killed' } })
    expect(root.jobs.read(handle.jobId, ownerOf(agent))).not.toHaveProperty('pending')
  })

  it('answers JOB_NOT_FOUND, naming the jobs there are, for an id it does not know', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    startJob(root, agent)
    expect(() => root.jobs.read('test-9', ownerOf(agent))).toThrow(expect.objectContaining({ code: 'JOB_NOT_FOUND', message: expect.stringContaining('the jobs are test-1') }))
  })

  it('does not echo a huge or many-line job id back whole in JOB_NOT_FOUND (a model\'s garbage id would fill its context)', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    let error: unknown
    try {
      root.jobs.read('x\n'.repeat(50_000), ownerOf(agent))
    } catch (thrown) {
      error = thrown
    }
    expect(error).toMatchObject({ code: 'JOB_NOT_FOUND' })
    const { message } = error as Error
    expect(message.length).toBeLessThan(300)
    expect(message).not.toContain('\n')
  })
})

describe('who sees a job', () => {
  /** A parent agent that ran one turn, two subagents of it, and an unrelated agent. */
  async function tree() {
    const booted = await boot([[{ text: 'ok' }]])
    const { root } = booted
    const parent = await root.agents.create({ sessionId: 'parent' })
    await parent.send('go')
    const runId = ofType(parent.session.events, 'turn/start')[0]!.runId as string
    const child = await root.agents.create({ sessionId: 'child', parent: { sessionId: 'parent', runId, callId: 'c1' } })
    const sibling = await root.agents.create({ sessionId: 'sibling', parent: { sessionId: 'parent', runId, callId: 'c2' } })
    const stranger = await root.agents.create({ sessionId: 'stranger' })
    const childOwner = { ...ownerOf(child), conversationId: 'parent', depth: 1, parentRunId: runId }
    return { ...booted, parent, child, sibling, stranger, childOwner }
  }

  it('shows a job to its owner and the sessions above it, never to a sibling or another conversation', async () => {
    const { root, parent, child, sibling, stranger, childOwner } = await tree()
    const { handle } = startJob(root, child, { owner: childOwner })
    const sees = (agent: Agent) => root.jobs.list(ownerOf(agent)).map((info) => info.jobId)
    expect([sees(child), sees(parent), sees(sibling), sees(stranger)]).toEqual([['test-1'], ['test-1'], [], []])
    for (const agent of [sibling, stranger]) {
      expect(() => root.jobs.read(handle.jobId, ownerOf(agent))).toThrow(expect.objectContaining({ code: 'JOB_NOT_FOUND' }))
      await expect(root.jobs.kill(handle.jobId, ownerOf(agent))).rejects.toMatchObject({ code: 'JOB_NOT_FOUND' })
    }
    expect(root.jobs.read(handle.jobId, ownerOf(parent)).info.status).toBe('running')
  })

  it('never gives two jobs of one conversation the same id, so a parent can tell its own from its subagents\'', async () => {
    const { root, parent, child, childOwner } = await tree()
    const own = startJob(root, parent).handle.jobId
    const childs = startJob(root, child, { owner: childOwner }).handle.jobId
    expect([own, childs]).toEqual(['test-1', 'test-2'])
    expect(root.jobs.list(ownerOf(parent)).map((info) => [info.jobId, info.sessionId])).toEqual([['test-1', 'parent'], ['test-2', 'child']])
  })

  it('numbers a resumed parent\'s new subagent jobs after the parent\'s old ones', async () => {
    const store = new MemorySessionStore()
    const first = await boot([[{ text: 'ok' }]], { store })
    const parent = await first.root.agents.create({ sessionId: 'parent' })
    await parent.send('go')
    startJob(first.root, parent)
    startJob(first.root, parent)
    await parent.close()
    const second = await boot([[{ text: 'ok' }]], { store })
    const { agent: resumed } = await second.root.agents.resume('parent')
    await resumed.send('again')
    const runId = ofType(resumed.session.events, 'turn/start')[1]!.runId as string
    const child = await second.root.agents.create({ sessionId: 'child', parent: { sessionId: 'parent', runId, callId: 'c1' } })
    const { handle } = startJob(second.root, child, { owner: { ...ownerOf(child), conversationId: 'parent', depth: 1, parentRunId: runId } })
    expect(handle.jobId).toBe('test-3')
  })
})

describe('ending jobs', () => {
  it('kill aborts the job\'s signal, waits for its body to return, and reports killed', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const steps: string[] = []
    const { handle } = startJob(root, agent, {
      run: async (job) => {
        await new Promise((resolve) => job.signal.addEventListener('abort', resolve))
        await tick()
        steps.push('body returned')
      },
    })
    const info = await root.jobs.kill(handle.jobId, ownerOf(agent))
    expect(steps).toEqual(['body returned'])
    expect(info).toMatchObject({ status: 'killed', cause: 'kill' })
  })

  it('leaves behind a body that ignores its signal once killGraceMs passed', async () => {
    const { root } = await boot([], { jobs: { killGraceMs: 0 } })
    const agent = await root.agents.create()
    const { handle } = startJob(root, agent, { run: () => new Promise<void>(() => {}) })
    expect(await root.jobs.kill(handle.jobId, ownerOf(agent))).toMatchObject({ status: 'killed' })
  })

  it('wait answers when the job ends, or with its running state when time runs out', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const { handle, body } = startJob(root, agent)
    expect(await root.jobs.wait(handle.jobId, 1, ownerOf(agent))).toMatchObject({ status: 'running' })
    const waiting = root.jobs.wait(handle.jobId, 600_000, ownerOf(agent))
    body().done({ exitCode: 0 })
    expect(await waiting).toMatchObject({ status: 'done', exitCode: 0 })
    const controller = new AbortController()
    const other = startJob(root, agent).handle
    const cancelled = root.jobs.wait(other.jobId, 600_000, ownerOf(agent), controller.signal)
    controller.abort()
    expect(await cancelled).toMatchObject({ status: 'running' })
  })

  it('kills an agent\'s jobs when it closes, waits for them, and records why', async () => {
    const { root, store } = await boot([])
    const agent = await root.agents.create({ sessionId: 'closing' })
    const { handle, body } = startJob(root, agent)
    await agent.close()
    expect(body().signal.aborted).toBe(true)
    expect(await handle.done).toMatchObject({ status: 'killed', cause: 'owner' })
    expect(ofType((await store.load('closing')).events, 'jobs/end')).toEqual([{ jobId: 'test-1', status: 'killed', cause: 'owner', notice: true }])
  })

  /** The warnings `root` logs from now on, each formatted as a line. */
  function warningsOf(root: Root): string[] {
    const warnings: string[] = []
    root.logger.exporter({ levels: { default: 3 }, export: (message) => { if (message.type === 'warn') warnings.push(format(...message.args)) } })
    return warnings
  }

  it('warns, naming the job, when its owner\'s log closes while a job is still stopping past killGraceMs, and not for one that stopped', async () => {
    const { root, store } = await boot([], { jobs: { killGraceMs: 0 } })
    const warnings = warningsOf(root)
    const agent = await root.agents.create({ sessionId: 'closing' })
    startJob(root, agent, { label: 'stubborn', run: () => new Promise<void>(() => {}) })
    startJob(root, agent, { label: 'obedient' })
    await agent.close()
    expect(warnings.filter((warning) => warning.includes('still stopping'))).toEqual([
      'session closing closed while job test-1 (stubborn) was still stopping after 0 ms (killGraceMs): its end is logged as killed; what it does after is its producer\'s to record',
    ])
    expect(ofType((await store.load('closing')).events, 'jobs/end').map((end) => end.status)).toEqual(['killed', 'killed'])
  })

  it('does not say a job that ended done was logged killed when its body was still returning as its owner closed', async () => {
    const { root, store } = await boot([], { jobs: { killGraceMs: 0 } })
    const warnings = warningsOf(root)
    const agent = await root.agents.create({ sessionId: 'closing' })
    // Ended, then still tidying up (a subagent closing its child's log) when the owner closes.
    startJob(root, agent, { label: 'tidying', run: (job) => { job.done({ exitCode: 0 }); return new Promise<void>(() => {}) } })
    await agent.close()
    expect(ofType((await store.load('closing')).events, 'jobs/end')).toEqual([{ jobId: 'test-1', status: 'done', exitCode: 0, notice: true }])
    expect(warnings.filter((warning) => warning.includes('still stopping'))).toEqual([expect.stringContaining('its end is logged as done')])
  })

  it('a job that records its process after the plugin was disposed is told the jobs service was unloaded, not that its session is closed', async () => {
    const { root, jobs } = await boot([])
    const agent = await root.agents.create({ sessionId: 'unloaded' })
    let kept: JobRun | undefined
    startJob(root, agent, {
      run: async (job) => {
        kept = job
        await new Promise((resolve) => job.signal.addEventListener('abort', resolve))
      },
    })
    await jobs.dispose()
    expect(agent.session.closed).toBe(false)
    const error = await kept!.record({ marker: 'REIN_TEST_JOB=late' }).then(() => undefined, (caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'JOB_RECORD_FAILED' })
    expect((error as Error).message).toContain('unloaded')
    expect((error as Error).message).not.toContain('session is closed')
    await agent.close()
  })

  it('kills and awaits every job when the plugin is disposed, and takes its tools away', async () => {
    const { root, jobs, store } = await boot([])
    const agent = await root.agents.create({ sessionId: 'disposed' })
    const cleaned: string[] = []
    for (let i = 0; i < 2; i++) {
      startJob(root, agent, {
        run: async (job) => {
          await new Promise((resolve) => job.signal.addEventListener('abort', resolve))
          await new Promise((resolve) => setTimeout(resolve, 5))
          cleaned.push(job.jobId)
        },
      })
    }
    expect(root.tools.list()).toEqual(['job_kill', 'job_list', 'job_output', 'recall_result'])
    await jobs.dispose()
    expect(cleaned.sort()).toEqual(['test-1', 'test-2'])
    expect(root.tools.list()).toEqual(['recall_result'])
    expect(root.get('jobs')).toBeUndefined()
    expect(['agent/turn-start', 'agent/step-end', 'agent/turn-end'].filter((name) => hasListeners(root, name))).toEqual([])
    expect(() => agent.session.append('jobs/start', {})).toThrow(expect.objectContaining({ code: 'UNKNOWN_EVENT_TYPE' }))
    await agent.close()
    const { events } = await store.load('disposed')
    expect(ofType(events, 'jobs/end').map((end) => end.cause)).toEqual(['disposed', 'disposed'])
    // The idle agent was told at once: its notices wait for its next turn.
    expect(ofType(events, 'jobs/notice')).toEqual([{ jobId: 'test-1' }, { jobId: 'test-2' }])
  })

  it('settle waits for running jobs, then kills the rest and saves it in their logs', async () => {
    const { root, store } = await boot([])
    const agent = await root.agents.create({ sessionId: 'exiting' })
    const quick = startJob(root, agent)
    const stuck = startJob(root, agent)
    const settling = root.jobs.settle({ timeoutMs: 50 })
    quick.body().done({ exitCode: 0 })
    const report = await settling
    expect(report.finished.map((info) => info.jobId)).toEqual([quick.handle.jobId])
    expect(report.killed.map((info) => [info.jobId, info.status, info.cause])).toEqual([[stuck.handle.jobId, 'killed', 'exit']])
    expect(stuck.body().signal.aborted).toBe(true)
    expect(ofType((await store.load('exiting')).events, 'jobs/end').map((end) => end.cause ?? end.status)).toEqual(['done', 'exit'])
  })

  it('settle kills at once when its signal aborts, and with no jobs returns at once', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    expect(await root.jobs.settle({ timeoutMs: 600_000 })).toEqual({ finished: [], killed: [] })
    startJob(root, agent)
    const controller = new AbortController()
    const settling = root.jobs.settle({ timeoutMs: 600_000, signal: controller.signal })
    controller.abort()
    expect((await settling).killed.map((info) => info.cause)).toEqual(['exit'])
  })

  it('tells onDone listeners about every job that ends, until their plugin is disposed', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const seen: string[] = []
    const fiber = root.plugin({ name: 'listener', inject: ['jobs'], apply: (ctx) => { ctx.jobs.onDone((info) => seen.push(`${info.jobId} ${info.status}`)) } })
    await fiber
    startJob(root, agent).body().done({ exitCode: 0 })
    await fiber.dispose()
    startJob(root, agent).body().done({ exitCode: 0 })
    expect(seen).toEqual(['test-1 done'])
  })
})
