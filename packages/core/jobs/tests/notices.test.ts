// Finish notices at the agent level, with the scripted LLM: one per job, never dropped, never
// repeated, none once the model read the output after the end, and never a turn of their own.
import type { Agent } from '@rein/agent'
import { countLines } from '@rein/base'
import { MemorySessionStore, eventData } from '@rein/session'
import { describe, expect, it } from 'vitest'
import type { JobRun } from '../src/index.ts'
import { boot, call, expectValidLog, jobStarter, notices, ofType, ownerOf, tick } from './harness.ts'

/** Every message this plugin injected into the log. */
const injected = (agent: Agent) => agent.session.events
  .filter((event) => event.type === 'user/message')
  .map((event) => eventData(event, 'user/message').message)
  .filter((message) => message.source.kind === 'plugin' && message.source.plugin === '@rein/jobs')
  .map((message) => (message.content[0] as { text: string }).text)

describe('finish notices', () => {
  it('gives each of several jobs that end together exactly one notice, with the next user message, and never starts a turn', async () => {
    const { root, llm } = await boot([
      [call('start_job', { label: 'one' }), call('start_job', { label: 'two' }), call('start_job', { label: 'three' })],
      [{ text: 'started' }],
      [call('job_list')],
      [{ text: 'seen' }],
    ])
    const bodies = jobStarter(root)
    const agent = await root.agents.create()
    await agent.send('start three')
    for (const job of bodies.values()) job.done({ exitCode: 0 })
    await tick()
    expect(agent.status).toBe('idle')
    expect(llm.requests).toHaveLength(2)
    await agent.send('what happened?')
    const texts = notices(llm.requests[2]!.messages)
    expect(texts).toEqual([
      'Background job test-1 (one) finished. No unread output. [status: done] [exit code: 0]',
      'Background job test-2 (two) finished. No unread output. [status: done] [exit code: 0]',
      'Background job test-3 (three) finished. No unread output. [status: done] [exit code: 0]',
    ])
    expect(llm.requests[2]!.messages.map((message) => message.source.kind).slice(-4)).toEqual(['user', 'plugin', 'plugin', 'plugin'])
    // The next step (and turn) carries them as history, never again as new messages.
    expect(notices(llm.requests[3]!.messages)).toEqual(texts)
    expect(injected(agent)).toEqual(texts)
    expectValidLog(agent.session.events)
  })

  it('delivers notices of jobs that end mid-turn at the next step boundary, each once, after the step\'s results', async () => {
    const ref: { finish?: () => void } = {}
    const { root, llm } = await boot((_request, index) => {
      if (index === 0) return [call('start_job', { label: 'a' }), call('start_job', { label: 'b' })]
      if (index === 1) {
        ref.finish?.()
        return [call('job_list')]
      }
      return [{ text: 'done' }]
    })
    const bodies = jobStarter(root)
    ref.finish = () => {
      bodies.get('test-1')!.output('hello\n')
      bodies.get('test-1')!.done({ exitCode: 0 })
      bodies.get('test-2')!.fail(new Error('disk full'))
    }
    const agent = await root.agents.create()
    await agent.send('go')
    expect(notices(llm.requests[1]!.messages)).toEqual([])
    const third = llm.requests[2]!.messages
    expect(third.map((message) => message.source.kind).slice(-3)).toEqual(['tool', 'plugin', 'plugin'])
    expect(notices(third)).toEqual([
      'Background job test-1 (a) finished. 6 characters of output unread: read them with job_output. [status: done] [exit code: 0]',
      'Background job test-2 (b) failed: disk full. No unread output. [status: failed]',
    ])
    expect(injected(agent)).toHaveLength(2)
    expectValidLog(agent.session.events)
  })

  it('sends no notice when the model read the output to the end after the job ended', async () => {
    const ref: { finish?: () => void } = {}
    const { root, llm } = await boot((_request, index) => {
      if (index === 0) return [call('start_job', { label: 'build' })]
      if (index === 1) {
        ref.finish?.()
        return [call('job_output', { job_id: 'test-1' })]
      }
      return [{ text: 'built' }]
    })
    const bodies = jobStarter(root)
    ref.finish = () => {
      bodies.get('test-1')!.output('compiled\n')
      bodies.get('test-1')!.done({ exitCode: 0 })
    }
    const agent = await root.agents.create()
    await agent.send('build it')
    const results = llm.requests[2]!.messages.at(-1)!
    expect(results.content[0]).toMatchObject({ type: 'tool-result', content: [{ type: 'text', text: 'compiled\n[status: done] [exit code: 0]' }] })
    expect(notices(llm.requests[2]!.messages)).toEqual([])
    expect(injected(agent)).toEqual([])
    expect(ofType(agent.session.events, 'jobs/seen')).toEqual([{ jobId: 'test-1' }])
  })

  it('still sends the notice when the model read only while the job ran', async () => {
    const ref: { finish?: () => void } = {}
    const { root, llm } = await boot((_request, index) => {
      if (index === 0) return [call('start_job', { label: 'serve' })]
      if (index === 1) return [call('job_output', { job_id: 'test-1' })]
      if (index === 2) {
        ref.finish?.()
        return [call('job_list')]
      }
      return [{ text: 'ok' }]
    })
    const bodies = jobStarter(root)
    ref.finish = () => bodies.get('test-1')!.done({ exitCode: 1 })
    const agent = await root.agents.create()
    await agent.send('serve')
    expect(notices(llm.requests[3]!.messages)).toEqual(['Background job test-1 (serve) finished. No unread output. [status: done] [exit code: 1]'])
  })

  it('sends no notice for a job the model killed itself, and says so in the job_kill answer', async () => {
    const { root, llm } = await boot([[call('start_job', { label: 'sleep' })], [call('job_kill', { job_id: 'test-1' })], [{ text: 'stopped' }], [{ text: 'later' }]])
    jobStarter(root)
    const agent = await root.agents.create()
    await agent.send('start and stop')
    await agent.send('anything?')
    const answer = llm.requests[2]!.messages.at(-1)!.content[0]
    expect(answer).toMatchObject({ content: [{ text: 'Killed test-1 (sleep).\n[status: killed]' }] })
    expect(notices(llm.requests[3]!.messages)).toEqual([])
    expect(ofType(agent.session.events, 'jobs/end')).toEqual([{ jobId: 'test-1', status: 'killed', cause: 'kill', notice: false }])
  })

  it('hands a notice a process owed but never delivered (it exited first) to the model on resume, once', async () => {
    const store = new MemorySessionStore()
    const first = await boot([[call('start_job', { label: 'tests' })], [{ text: 'running' }]], { store })
    const bodies = jobStarter(first.root)
    const agent = await first.root.agents.create({ sessionId: 'owed' })
    await agent.send('run the tests')
    // `rein run` ends: it waits for the job, which ends; the notice waits in the idle agent's inbox.
    const settling = first.root.jobs.settle({ timeoutMs: 600_000 })
    bodies.get('test-1')!.done({ exitCode: 0 })
    await settling
    await agent.close()
    const second = await boot([[{ text: 'ok' }], [{ text: 'ok again' }]], { store })
    const { agent: resumed } = await second.root.agents.resume('owed')
    await resumed.send('and?')
    await resumed.send('more?')
    expect(notices(second.llm.requests[0]!.messages)).toEqual(['Background job test-1 (tests) finished. Its output is no longer available. [status: done] [exit code: 0]'])
    expect(injected(resumed)).toHaveLength(1)
  })

  it('keeps a job\'s result with its end: a later process\'s notice and job_output give it (the output did not survive), cut to bufferChars', async () => {
    const store = new MemorySessionStore()
    const first = await boot([[call('start_job', { label: 'research' })], [{ text: 'running' }]], { store, jobs: { bufferChars: 1_000 } })
    const bodies = jobStarter(first.root)
    const agent = await first.root.agents.create({ sessionId: 'kept' })
    await agent.send('look into it')
    const settling = first.root.jobs.settle({ timeoutMs: 600_000 })
    bodies.get('test-1')!.output('progress\n')
    bodies.get('test-1')!.done({ result: `the answer: ${'y'.repeat(1_200)}` })
    await settling
    await agent.close()
    const [end] = ofType((await store.load('kept')).events, 'jobs/end')
    expect(end).toMatchObject({ jobId: 'test-1', status: 'done', notice: true })
    expect(end).toMatchObject({ result: 'y'.repeat(1_000), resultCut: 212 })
    const second = await boot([[call('job_output', { job_id: 'test-1' })], [{ text: 'ok' }]], { store, jobs: { bufferChars: 1_000 } })
    const { agent: resumed } = await second.root.agents.resume('kept')
    await resumed.send('and?')
    expect(notices(second.llm.requests[0]!.messages)).toEqual(['Background job test-1 (research) finished. Its result was kept: read it with job_output. [status: done]'])
    const answer = second.llm.requests[1]!.messages.at(-1)!.content[0]
    expect(answer).toMatchObject({ content: [{ text: `(test-1 belonged to an earlier run of this session: its result was kept)\n[… 212 earlier characters were cut: a job keeps at most 1,000 characters and 1,000 lines of its result.]\n${'y'.repeat(1_000)}\n[status: done]` }] })
  })

  it('does not say a job ran in an earlier rein process when its parent was closed and resumed in the same process', async () => {
    const store = new MemorySessionStore()
    const { root, llm } = await boot([[call('start_job', { label: 'research' })], [{ text: 'running' }], [call('job_output', { job_id: 'test-1' })], [{ text: 'ok' }]], { store })
    const bodies = jobStarter(root, undefined, { outputPath: '/sessions/same/spill/research.txt' })
    const agent = await root.agents.create({ sessionId: 'same' })
    await agent.send('look into it')
    bodies.get('test-1')!.done({ result: 'the answer' })
    await agent.close()
    const { agent: resumed } = await root.agents.resume('same')
    await resumed.send('and?')
    const answer = llm.requests[3]!.messages.at(-1)!.content[0]
    expect(answer).toMatchObject({ content: [{ text: '(test-1 belonged to an earlier run of this session: its result was kept; its output is saved at /sessions/same/spill/research.txt)\nthe answer\n[status: done]' }] })
    await resumed.close()
  })

  it('gives the same text of an answer longer than bufferChars read live and read back by a later process', async () => {
    const store = new MemorySessionStore()
    const first = await boot([[call('start_job', { label: 'research' })], [{ text: 'running' }]], { store, jobs: { bufferChars: 1_000 } })
    const bodies = jobStarter(first.root)
    const agent = await first.root.agents.create({ sessionId: 'long' })
    await agent.send('look into it')
    // As a background subagent does: progress, then the answer as output and as the kept result.
    const answer = `The subagent answered:\n${'head '.repeat(100)}${'x'.repeat(700)}\nThe end: ${'z'.repeat(100)}\n`
    const body = bodies.get('test-1')!
    body.output('progress\n')
    body.output(answer)
    body.done({ result: answer })
    await tick()
    const live = first.root.jobs.read('test-1', ownerOf(agent))
    await agent.close()
    const second = await boot([], { store, jobs: { bufferChars: 1_000 } })
    const { agent: resumed } = await second.root.agents.resume('long')
    second.root.jobs.reap('long')
    const later = second.root.jobs.read('test-1', ownerOf(resumed))
    expect(later.info.earlier).toBe(true)
    expect(later.output).toBe(live.output)
    // The end of a long answer is what a model needs: both keep it.
    expect(live.output.endsWith(`The end: ${'z'.repeat(100)}\n`)).toBe(true)
    expect(later.droppedChars).toBe(answer.length - later.output.length)
    await resumed.close()
  })

  it('does not hand a delivered notice again in a later process', async () => {
    const store = new MemorySessionStore()
    const first = await boot([[call('start_job', { label: 'lint' })], [{ text: 'started' }], [{ text: 'seen it' }]], { store })
    const bodies = jobStarter(first.root)
    const agent = await first.root.agents.create({ sessionId: 'delivered' })
    await agent.send('lint')
    bodies.get('test-1')!.done({ exitCode: 0 })
    await agent.send('next')
    expect(notices(first.llm.requests[2]!.messages)).toHaveLength(1)
    await agent.close()
    const second = await boot([[{ text: 'ok' }]], { store })
    const { agent: resumed } = await second.root.agents.resume('delivered')
    await resumed.send('and?')
    expect(injected(resumed)).toHaveLength(1)
  })

  it('does not hand a notice twice when the jobs plugin is reloaded before the agent\'s next turn', async () => {
    const { root, llm, jobs } = await boot([[call('start_job', { label: 'lint' })], [{ text: 'started' }], [{ text: 'ok' }]])
    const bodies = jobStarter(root)
    const agent = await root.agents.create()
    await agent.send('lint')
    bodies.get('test-1')!.done({ exitCode: 0 })
    await jobs.dispose()
    const { default: JobService } = await import('../src/index.ts')
    const again = await root.plugin(JobService)
    await agent.send('next')
    expect(notices(llm.requests[2]!.messages)).toEqual(['Background job test-1 (lint) finished. No unread output. [status: done] [exit code: 0]'])
    await again.dispose()
  })

  it('tells the resumed model about jobs killed when their agent closed', async () => {
    const store = new MemorySessionStore()
    const first = await boot([[call('start_job', { label: 'watch' })], [{ text: 'started' }]], { store })
    jobStarter(first.root)
    const agent = await first.root.agents.create({ sessionId: 'closed' })
    await agent.send('watch')
    await agent.close()
    const second = await boot([[{ text: 'ok' }]], { store })
    const { agent: resumed } = await second.root.agents.resume('closed')
    await resumed.send('still watching?')
    expect(notices(second.llm.requests[0]!.messages)).toEqual(['Background job test-1 (watch) was killed because its agent closed. Its output is no longer available. [status: killed]'])
  })

  it('says a job stopped by its own time limit timed out, in its notice, job_list, job_output and after a resume', async () => {
    const store = new MemorySessionStore()
    const first = await boot([[call('start_job', { label: 'sleep 2' })], [{ text: 'started' }], [call('job_list')], [{ text: 'ok' }]], { store })
    jobStarter(first.root, (job) => job.done({ signal: 'SIGTERM', timedOutAfterMs: 500 }))
    const agent = await first.root.agents.create({ sessionId: 'timed' })
    await agent.send('sleep')
    await agent.send('list')
    expect(notices(first.llm.requests[2]!.messages)).toEqual(['Background job test-1 (sleep 2) timed out. No unread output. [status: done] [timed out after 500 ms] [signal: SIGTERM]'])
    expect(first.llm.requests[3]!.messages.at(-1)!.content[0]).toMatchObject({ content: [{ text: 'test-1: sleep 2 (0 characters unread) [status: done] [timed out after 500 ms] [signal: SIGTERM]' }] })
    expect(ofType(agent.session.events, 'jobs/end')).toMatchObject([{ status: 'done', signal: 'SIGTERM', timedOutAfterMs: 500 }])
    await agent.close()
    const second = await boot([[call('job_output', { job_id: 'test-1' })], [{ text: 'ok' }]], { store })
    const { agent: resumed } = await second.root.agents.resume('timed')
    await resumed.send('and?')
    expect(second.llm.requests[1]!.messages.at(-1)!.content[0]).toMatchObject({ content: [{ text: '(test-1 belonged to an earlier run of this session: its output was not kept)\n[status: done] [timed out after 500 ms] [signal: SIGTERM]' }] })
  })

  it('names no output file for a job whose work never started, and says it never started: in its notice, job_output, ctx.jobs and in a later process', async () => {
    const store = new MemorySessionStore()
    const first = await boot([[call('start_job', { label: 'dev server' })], [{ text: 'started' }], [{ text: 'ok' }]], { store })
    jobStarter(first.root, (job) => job.neverStarted(new Error('spawn bash ENOENT')), { outputPath: '/sessions/unstarted/spill/dev.txt' })
    const agent = await first.root.agents.create({ sessionId: 'unstarted' })
    await agent.send('serve')
    const [info] = first.root.jobs.list(ownerOf(agent))
    expect(info).toMatchObject({ status: 'failed', error: 'spawn bash ENOENT', neverStarted: true })
    expect(info?.outputPath).toBeUndefined()
    expect(ofType(agent.session.events, 'jobs/end')).toEqual([{ jobId: 'test-1', status: 'failed', error: 'spawn bash ENOENT', neverStarted: true, notice: true }])
    await agent.send('and?')
    expect(notices(first.llm.requests[2]!.messages)).toEqual(['Background job test-1 (dev server) never started: spawn bash ENOENT. [status: failed]'])
    await agent.close()
    const second = await boot([[call('job_output', { job_id: 'test-1' })], [{ text: 'ok' }]], { store })
    const { agent: resumed } = await second.root.agents.resume('unstarted')
    await resumed.send('is it up?')
    expect(second.llm.requests[1]!.messages.at(-1)!.content[0]).toMatchObject({ content: [{ text: '(test-1 belonged to an earlier run of this session: it never started)\nThe job never started: spawn bash ENOENT\n[status: failed]' }] })
    const later = second.root.jobs.read('test-1', ownerOf(resumed)).info
    expect(later).toMatchObject({ earlier: true, neverStarted: true })
    expect(later).not.toHaveProperty('outputPath')
  })

  it('keeps the note that the output file stopped at its cap in the log, so a later process says it beside the path, in the notice and in job_output', async () => {
    const store = new MemorySessionStore()
    const first = await boot([[call('start_job', { label: 'dev server' })], [{ text: 'started' }]], { store })
    const note = 'only its first 4 KiB: later output was not saved (maxOutputFileBytes)'
    const bodies = jobStarter(first.root, undefined, { outputPath: '/sessions/capped/spill/dev.txt' })
    const agent = await first.root.agents.create({ sessionId: 'capped' })
    await agent.send('serve')
    bodies.get('test-1')!.outputFileCut(note)
    await first.root.jobs.settle({ timeoutMs: 1 })
    expect(ofType(agent.session.events, 'jobs/end')).toMatchObject([{ jobId: 'test-1', status: 'killed', outputFileNote: note }])
    await agent.close()
    const second = await boot([[call('job_output', { job_id: 'test-1' })], [{ text: 'ok' }]], { store })
    const { agent: resumed } = await second.root.agents.resume('capped')
    await resumed.send('is it up?')
    expect(notices(second.llm.requests[0]!.messages)).toEqual([`Background job test-1 (dev server) was killed because rein exited before it finished. Its output is saved at /sessions/capped/spill/dev.txt (${note}). [status: killed]`])
    expect(second.llm.requests[1]!.messages.at(-1)!.content[0]).toMatchObject({ content: [{ text: `(test-1 belonged to an earlier run of this session: its output is saved at /sessions/capped/spill/dev.txt (${note}))\n[status: killed]` }] })
    expect(second.root.jobs.read('test-1', ownerOf(resumed)).info).toMatchObject({ earlier: true, outputPath: '/sessions/capped/spill/dev.txt', outputFileNote: note })
  })

  it('reads a logged end whose file note is missing, of the wrong type or too long as a log without a note, or with it cut', async () => {
    const store = new MemorySessionStore()
    const first = await boot([], { store })
    const parent = await first.root.agents.create({ sessionId: 'odd' })
    const log = (type: string, data: object) => parent.session.append(type, data as never)
    log('jobs/start', { jobId: 'test-1', kind: 'test', label: 'one', outputPath: '/f/1.txt' })
    log('jobs/end', { jobId: 'test-1', status: 'done', notice: false })
    log('jobs/start', { jobId: 'test-2', kind: 'test', label: 'two', outputPath: '/f/2.txt' })
    log('jobs/end', { jobId: 'test-2', status: 'done', notice: false, outputFileNote: 42 })
    log('jobs/start', { jobId: 'test-3', kind: 'test', label: 'three', outputPath: '/f/3.txt' })
    log('jobs/end', { jobId: 'test-3', status: 'done', notice: false, outputFileNote: `only\nits first ${'x'.repeat(1_000)}` })
    log('jobs/start', { jobId: 'test-4', kind: 'test', label: 'four' })
    log('jobs/end', { jobId: 'test-4', status: 'done', notice: false, outputFileNote: 'a note with no file' })
    await parent.close()
    const second = await boot([], { store })
    const { agent } = await second.root.agents.resume('odd')
    second.root.jobs.reap('odd')
    const read = (id: string) => second.root.jobs.read(id, ownerOf(agent)).info
    expect(read('test-1')).toMatchObject({ earlier: true, outputPath: '/f/1.txt' })
    expect(read('test-1')).not.toHaveProperty('outputFileNote')
    expect(read('test-2')).not.toHaveProperty('outputFileNote')
    const cut = read('test-3').outputFileNote ?? ''
    expect(cut.startsWith('only its first x')).toBe(true)
    expect(cut.length).toBeLessThanOrEqual(200)
    expect(read('test-4')).not.toHaveProperty('outputFileNote')
    await agent.close()
  })

  it('tells the resumed model which jobs rein killed when it exited', async () => {
    const store = new MemorySessionStore()
    const first = await boot([[call('start_job', { label: 'dev server' })], [{ text: 'started' }]], { store })
    jobStarter(first.root)
    const agent = await first.root.agents.create({ sessionId: 'exited' })
    await agent.send('serve')
    await first.root.jobs.settle({ timeoutMs: 1 })
    await agent.close()
    const second = await boot([[{ text: 'ok' }]], { store })
    const { agent: resumed } = await second.root.agents.resume('exited')
    await resumed.send('is it up?')
    expect(notices(second.llm.requests[0]!.messages)).toEqual(['Background job test-1 (dev server) was killed because rein exited before it finished. Its output is no longer available. [status: killed]'])
  })

  it('names where the output is saved, in the notice and in job_output, when a resumed model asks about a job of the earlier process', async () => {
    const store = new MemorySessionStore()
    const first = await boot([[call('start_job', { label: 'dev server' })], [{ text: 'started' }]], { store })
    jobStarter(first.root, undefined, { outputPath: '/sessions/exited/spill/dev.txt' })
    const agent = await first.root.agents.create({ sessionId: 'exited' })
    await agent.send('serve')
    await first.root.jobs.settle({ timeoutMs: 1 })
    await agent.close()
    expect(ofType((await store.load('exited')).events, 'jobs/start')).toEqual([{ jobId: 'test-1', kind: 'test', label: 'dev server', outputPath: '/sessions/exited/spill/dev.txt' }])
    const second = await boot([[call('job_output', { job_id: 'test-1', wait_ms: 60_000 })], [call('job_kill', { job_id: 'test-1' })], [{ text: 'ok' }]], { store })
    const { agent: resumed } = await second.root.agents.resume('exited')
    await resumed.send('is it up?')
    expect(notices(second.llm.requests[0]!.messages)).toEqual(['Background job test-1 (dev server) was killed because rein exited before it finished. Its output is saved at /sessions/exited/spill/dev.txt. [status: killed]'])
    const answer = second.llm.requests[1]!.messages.at(-1)!.content[0]
    expect(answer).toMatchObject({ content: [{ text: '(test-1 belonged to an earlier run of this session: its output is saved at /sessions/exited/spill/dev.txt)\n[status: killed]' }] })
    expect(second.llm.requests[2]!.messages.at(-1)!.content[0]).toMatchObject({ content: [{ text: 'test-1 (dev server) had already ended.\n[status: killed]' }] })
  })

  it('answers job_output with the drop note and the saved output\'s path, and ends every answer with the status', async () => {
    const { root } = await boot([], { jobs: { bufferChars: 1_000 } })
    const agent = await root.agents.create()
    const handle = root.jobs.start({
      kind: 'test', label: 'noisy', owner: ownerOf(agent), outputPath: '/sessions/s/noisy.txt',
      run: (job) => {
        job.output('x'.repeat(1_500))
        return new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()))
      },
    })
    const context = { identity: ownerOf(agent), sessionId: agent.session.id }
    const run = (name: string, args: object) => root.tools.execute({ callId: 'c', name, arguments: JSON.stringify(args), signal: new AbortController().signal, context })
    const output = await run('job_output', { job_id: handle.jobId })
    expect(output.content).toEqual([{ type: 'text', text: `[… 500 earlier characters were dropped: a job keeps at most 1,000 unread characters and 1,000 lines. The output is saved at /sessions/s/noisy.txt.]\n${'x'.repeat(1_000)}\n[status: running]` }])
    expect((await run('job_list', {})).content).toEqual([{ type: 'text', text: 'test-1: noisy (0 characters unread) [status: running]' }])
    expect((await run('job_output', { job_id: handle.jobId, wait_ms: 1 })).content).toEqual([{ type: 'text', text: '(no new output)\n[status: running]' }])
    expect((await run('job_kill', { job_id: handle.jobId })).content).toEqual([{ type: 'text', text: 'Killed test-1 (noisy).\n[status: killed]' }])
    expect((await run('job_kill', { job_id: handle.jobId })).content).toEqual([{ type: 'text', text: 'test-1 (noisy) had already ended.\n[status: killed]' }])
    const missing = await run('job_output', { job_id: 'test-7' })
    expect(missing).toMatchObject({ isError: true, error: { code: 'JOB_NOT_FOUND' } })
    const outside = await root.tools.execute({ callId: 'c', name: 'job_list', arguments: '{}', signal: new AbortController().signal })
    expect(outside).toMatchObject({ isError: true, error: { code: 'NO_RUN_IDENTITY' } })
  })
  it('keeps a job_output answer of many short lines within the agent\'s spill line limit, with one note for what was dropped', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    const handle = root.jobs.start({
      kind: 'test', label: 'yes', owner: ownerOf(agent), outputPath: '/sessions/s/yes.txt',
      run: (job) => {
        for (let i = 0; i < 1_500; i++) job.output('y\n'.repeat(1_000))
        return new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()))
      },
    })
    const context = { identity: ownerOf(agent), sessionId: agent.session.id }
    const output = await root.tools.execute({ callId: 'c', name: 'job_output', arguments: JSON.stringify({ job_id: handle.jobId }), signal: new AbortController().signal, context })
    const text = (output.content[0] as { text: string }).text
    // The agent's defaults: spillAfterChars 20,000, spillAfterLines 1,200.
    expect({ chars: text.length <= 20_000, lines: countLines(text) <= 1_200 }).toEqual({ chars: true, lines: true })
    expect(text).toBe(`[… 2,998,000 earlier characters were dropped: a job keeps at most 16,000 unread characters and 1,000 lines. The output is saved at /sessions/s/yes.txt.]\n${'y\n'.repeat(999)}y\n[status: running]`)
  })
})

describe('the held line in job_output', () => {
  /** A `test` job that printed a line and holds `held` back, as a progress bar being redrawn. */
  async function redrawing(held: string, end?: (job: JobRun) => void) {
    const { root } = await boot([])
    const agent = await root.agents.create()
    let job!: JobRun
    const handle = root.jobs.start({
      kind: 'test', label: 'download', owner: ownerOf(agent),
      run: (run) => {
        job = run
        run.output('fetching\n')
        run.pending(() => held)
        return new Promise<void>((resolve) => run.signal.addEventListener('abort', () => resolve()))
      },
    })
    const context = { identity: ownerOf(agent), sessionId: agent.session.id }
    const run = (name: string, args: object) => root.tools.execute({ callId: `c-${name}`, name, arguments: JSON.stringify(args), signal: new AbortController().signal, context })
    const text = async () => ((await run('job_output', { job_id: handle.jobId })).content[0] as { text: string }).text
    return { root, handle, run, text, end: () => end?.(job) }
  }

  it('says what a running job\'s held line reads now', async () => {
    const { text } = await redrawing('downloaded 57%')
    expect(await text()).toBe('fetching\n[a line it is still redrawing (a progress display) reads now: downloaded 57%]\n[status: running]')
  })

  it('does not say a killed job is still redrawing its line: it gives the line\'s last state when the job ended', async () => {
    const { run, text } = await redrawing('downloaded 57%')
    await run('job_kill', { job_id: 'test-1' })
    expect(await text()).toBe('fetching\n[the last state of a line it was redrawing when it ended: downloaded 57%]\n[status: killed]')
  })

  it('does not say a job that failed after it started is still redrawing its line', async () => {
    const { text, end, handle } = await redrawing('downloaded 57%', (job) => job.fail(new Error('disk full')))
    end()
    await handle.done
    expect(await text()).toBe('fetching\n[the last state of a line it was redrawing when it ended: downloaded 57%]\nThe job failed: disk full\n[status: failed]')
  })
})

describe('the job tools', () => {
  /** A running `test` job that printed `output` and stops when `release` is called (or, without `stubborn`, when killed). */
  async function oneJob(options: { killGraceMs?: number; stubborn?: boolean } = {}) {
    const { root } = await boot([], { jobs: { killGraceMs: options.killGraceMs ?? 5_000 } })
    const agent = await root.agents.create()
    let release: () => void = () => {}
    const handle = root.jobs.start({
      kind: 'test', label: 'server', owner: ownerOf(agent),
      run: (job) => {
        job.output('listening on 8080\n')
        return new Promise<void>((resolve) => {
          release = resolve
          if (!options.stubborn) job.signal.addEventListener('abort', () => resolve())
        })
      },
    })
    const context = { identity: ownerOf(agent), sessionId: agent.session.id }
    const run = (name: string, args: object, signal = new AbortController().signal) => root.tools.execute({ callId: `c-${name}`, name, arguments: JSON.stringify(args), signal, context })
    return { root, handle, run, release: () => release() }
  }

  it('leaves the output unread when job_output is cancelled while it waits, so the next job_output returns it', async () => {
    const { root, handle, run } = await oneJob()
    let waiting!: () => void
    const entered = new Promise<void>((resolve) => { waiting = resolve })
    // Past next(), the body has started its wait: the cancel below lands while it waits.
    root.tools.wrapExecute((call, next) => {
      const outcome = next()
      if (call.toolName === 'job_output') waiting()
      return outcome
    })
    const controller = new AbortController()
    const cancelled = run('job_output', { job_id: handle.jobId, wait_ms: 600_000 }, controller.signal)
    await entered
    controller.abort()
    expect(await cancelled).toMatchObject({ isError: true, error: { code: 'JOB_OUTPUT_CANCELLED' } })
    // Whatever the cancelled body still does has run by now.
    await tick()
    expect((await run('job_output', { job_id: handle.jobId })).content).toEqual([{ type: 'text', text: 'listening on 8080\n[status: running]' }])
  })

  it('says in job_kill\'s answer that the job was still stopping when its body outlived killGraceMs', async () => {
    const { handle, run, release } = await oneJob({ killGraceMs: 0, stubborn: true })
    const answer = await run('job_kill', { job_id: handle.jobId })
    release()
    expect(answer).toMatchObject({ isError: false, value: { status: 'killed', killed: true, stopping: true } })
    expect(answer.content).toEqual([{ type: 'text', text: 'Killed test-1 (server).\nIt was still stopping after 0 ms (killGraceMs): some of its processes may still be running; check before starting it again.\n18 characters of output unread: job_output reads them.\n[status: killed]' }])
  })
})
