import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import type { Context } from '@deepseek-ai/cordis'
import { formatMoney, isProcessAlive } from '@rein/base'
import { userMessage, type AdapterRequest } from '@rein/llm'
import type { SessionEvent } from '@rein/session'
import { appendOpenCalls, validateSessionInvariants, type ScriptedTurn } from '@rein/testkit'
import { defineTool } from '@rein/tools'
import { describe, expect, it, vi } from 'vitest'
import { boot, byTask, call, gates, resultOf, taskOf, textOf, usage } from './harness.ts'

const viewer = (agent: { session: { id: string } }) => ({ sessionId: agent.session.id })

const inBackground = (prompt: string) => ({ description: 'look it up', prompt, run_in_background: true })

/** The child session a background call started, from its result. */
function startedChild(events: readonly SessionEvent[], callId: string): string {
  const text = textOf(resultOf(events, callId))
  const match = /^Started subagent (\S+) as job subagent-1; its answer will arrive as a message\. job_output subagent-1 shows its progress, job_kill stops it\.$/.exec(text)
  if (!match) throw new Error(`not a background start: ${text}`)
  return match[1]!
}

/** How the child's last turn ended, from its log. */
async function childEnd(root: Context, sessionId: string) {
  const session = await root.sessions.load(sessionId)
  return session.events.findLast((event) => event.type === 'turn/end')!.data as { reason: string }
}

/** A log's jobs events, as `[type, data]`. */
const ofJobs = (events: readonly SessionEvent[]) => events.filter((event) => event.type.startsWith('jobs/')).map((event) => [event.type, event.data])

/** Text of the user messages (injected ones included) a request carries after its first. */
const laterUserText = (request: AdapterRequest) => request.messages.slice(1)
  .filter((message) => message.role === 'user')
  .flatMap((message) => message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])))
  .join('\n')

describe('a background subagent', () => {
  it('returns a job id at once; job_list shows it running; when it ends, the jobs notice sends the parent to job_output, which holds the answer', async () => {
    const { root, llm, create } = await boot(byTask({
      'start': [
        [call('subagent', inBackground('where is x?'), 'c1')],
        [call('job_list', {}, 'c2')],
        // Opens the child's gate and waits for the job to end: the notice joins the next step.
        [call('finish', {}, 'c3')],
        [call('job_output', { job_id: 'subagent-1' }, 'c4')],
        [{ text: 'parent done' }],
      ],
      'where is x?': [[call('gate', { name: 'child' }, 'g1')], [{ text: 'x is in the drawer' }]],
    }), { jobs: {} })
    const { open } = gates(root)
    root.tools.register(defineTool({
      name: 'finish',
      description: 'Lets the subagent finish.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      effects: ['read'],
      execute: async (_args, run) => {
        open('child')
        return (await root.jobs.wait('subagent-1', 60_000, run.identity!)).status
      },
    }))
    const parent = await create()
    const turn = await parent.send('start')
    expect(turn.text).toBe('parent done')
    const childId = startedChild(parent.session.events, 'c1')
    expect(textOf(resultOf(parent.session.events, 'c2'))).toMatch(/^subagent-1: look it up( \(.*\))? \[status: running\]$/)
    expect(textOf(resultOf(parent.session.events, 'c3'))).toBe('done')

    const requests = llm.requests.filter((request) => taskOf(request) === 'start')
    // Not before the job ended; then jobs' own notice, which is in the parent's log before it is
    // handed over (so a crash cannot lose it), and job_output gives the answer.
    expect(laterUserText(requests[2]!)).toBe('')
    expect(laterUserText(requests[3]!)).toMatch(/^Background job subagent-1 \(look it up\) finished\. \d+ characters of output unread: read them with job_output\./)
    expect(parent.session.events.some((event) => event.type === 'jobs/notice')).toBe(true)
    expect(textOf(resultOf(parent.session.events, 'c4'))).toMatch(new RegExp(`The subagent answered \\(subagent session ${childId}, cost [\\d.]+\\):\nx is in the drawer`))

    expect(await childEnd(root, childId)).toMatchObject({ reason: 'completed' })
    expect(root.jobs.list(viewer(parent))[0]).toMatchObject({ jobId: 'subagent-1', status: 'done' })
    // The child was closed when its job ended.
    expect(root.agents.list()).toEqual([parent])
  })

  it('keeps working when the outer call is cancelled', async () => {
    const { root, create } = await boot(byTask({
      'start': [
        [call('subagent', inBackground('where is x?'), 'c1')],
        [call('gate', { name: 'parent' }, 'c2')],
      ],
      'where is x?': [[call('gate', { name: 'child' }, 'g1')], [{ text: 'x is in the drawer' }]],
    }), { jobs: {} })
    const { entered, open } = gates(root)
    const parent = await create()
    const turn = parent.send('start')
    await Promise.all([entered('parent'), entered('child')])
    parent.cancel()
    expect((await turn).reason).toBe('aborted')
    expect(root.jobs.list(viewer(parent))[0]).toMatchObject({ jobId: 'subagent-1', status: 'running' })
    open('child')
    expect(await root.jobs.wait('subagent-1', 60_000, viewer(parent))).toMatchObject({ status: 'done' })
    expect(await childEnd(root, startedChild(parent.session.events, 'c1'))).toMatchObject({ reason: 'completed' })
  })

  /** A parent whose first turn started a background child now waiting at its gate; `later` answers the parent's next turn. */
  async function childWaiting(later: ScriptedTurn[] = []) {
    const { root, fiber, create, llm } = await boot(byTask({
      'start': [[call('subagent', inBackground('where is x?'), 'c1')], [{ text: 'started' }], ...later],
      'where is x?': [[call('gate', { name: 'child' }, 'g1')], [{ text: 'never' }]],
    }), { jobs: {} })
    const { entered } = gates(root)
    const parent = await create()
    await parent.send('start')
    await entered('child')
    return { root, fiber, parent, llm }
  }

  it('charges what the child spends while its parent is idle to the parent\'s next turn, in its result\'s subagents', async () => {
    const { root, create } = await boot(byTask({
      'start': [[call('subagent', inBackground('where is x?'), 'c1')], [{ text: 'started' }], [{ text: 'noted' }]],
      'where is x?': [[call('gate', { name: 'child' }, 'g1'), usage(7, 2)], [{ text: 'x is in the drawer' }, usage(50, 3)]],
    }), { jobs: {} })
    const { entered, open } = gates(root)
    const parent = await create()
    const first = await parent.send('start')
    await entered('child')
    // The child's second request is made between the parent's turns.
    open('child')
    expect(await root.jobs.wait('subagent-1', 60_000, viewer(parent))).toMatchObject({ status: 'done' })
    const next = await parent.send('and now?')
    expect(first.subagents?.usage).toMatchObject({ inputTokens: 7, outputTokens: 2 })
    expect(next.subagents?.usage).toMatchObject({ inputTokens: 50, outputTokens: 3 })
  })

  it('is stopped by job_kill: the child\'s turn ends aborted and the job killed', async () => {
    const { root, parent } = await childWaiting([[call('job_kill', { job_id: 'subagent-1' }, 'c2')], [{ text: 'killed' }]])
    expect((await parent.send('stop it')).text).toBe('killed')
    expect(textOf(resultOf(parent.session.events, 'c2'))).toMatch(/^Killed subagent-1 \(look it up\)\./)
    expect(root.jobs.list(viewer(parent))[0]).toMatchObject({ jobId: 'subagent-1', status: 'killed', cause: 'kill' })
    expect(await childEnd(root, startedChild(parent.session.events, 'c1'))).toMatchObject({ reason: 'aborted' })
    expect(root.agents.list()).toEqual([parent])
  })

  it('is interrupted when the plugin is disposed: the child\'s log records interrupted and the job fails saying so', async () => {
    const { root, fiber, parent } = await childWaiting()
    await fiber.dispose()
    expect(await childEnd(root, startedChild(parent.session.events, 'c1'))).toMatchObject({ reason: 'interrupted' })
    const [job] = root.jobs.list(viewer(parent))
    expect(job).toMatchObject({ jobId: 'subagent-1', status: 'failed' })
    expect(job!.error).toMatch(/^SUBAGENT_INTERRUPTED: the subagent was interrupted/)
    expect(root.agents.list()).toEqual([parent])
  })

  it('keeps its answer and cost for a parent closed before reading them: the resumed parent\'s job_output gives them, told once', async () => {
    const { root, llm, create } = await boot(byTask({
      'start': [[call('subagent', inBackground('where is x?'), 'c1')], [{ text: 'started' }], [call('job_output', { job_id: 'subagent-1' }, 'c2')], [{ text: 'read' }], [{ text: 'nothing new' }]],
      'where is x?': [[call('gate', { name: 'child' }, 'g1')], [{ text: 'x is in the drawer', usage: { inputTokens: 10, outputTokens: 5 } }]],
    }), { jobs: {} })
    const { entered, open } = gates(root)
    const parent = await create()
    await parent.send('start')
    await entered('child')
    // The child ends while its parent is idle (rein run waiting for its jobs); then the parent closes.
    open('child')
    expect(await root.jobs.wait('subagent-1', 60_000, viewer(parent))).toMatchObject({ status: 'done' })
    const childId = startedChild(parent.session.events, 'c1')
    await parent.close()
    const child = await root.sessions.load(childId)
    const childCost = child.events.filter((event) => event.type === 'llm/attempt').reduce((sum, event) => sum + ((event.data as { cost?: number }).cost ?? 0), 0)

    const { agent } = await root.agents.resume(parent.session.id)
    expect((await agent.send('go on')).text).toBe('read')
    const requests = llm.requests.filter((request) => taskOf(request) === 'start')
    // Told once, on resume: the answer is there to read.
    expect(laterUserText(requests[2]!).match(/Background job subagent-1/g)).toHaveLength(1)
    expect(laterUserText(requests[2]!)).toContain('Background job subagent-1 (look it up) finished. Its result was kept: read it with job_output.')
    expect(textOf(resultOf(agent.session.events, 'c2'))).toContain(`The subagent answered (subagent session ${childId}, cost ${formatMoney(childCost)}):\nx is in the drawer`)
    expect((await agent.send('again')).text).toBe('nothing new')
    expect(laterUserText(llm.requests.at(-1)!).match(/Background job subagent-1/g)).toHaveLength(1)
    await agent.close()
  })

  it('is cancelled when its parent closes first: the parent\'s log records the job killed before it closes, the child\'s its aborted turn, and the resumed parent is told once', async () => {
    const { root, llm, parent } = await childWaiting([[{ text: 'noted' }], [{ text: 'still noted' }]])
    const childId = startedChild(parent.session.events, 'c1')
    await parent.close()
    expect(await childEnd(root, childId)).toMatchObject({ reason: 'aborted' })
    expect(ofJobs((await root.sessions.load(parent.session.id)).events)).toEqual([
      ['jobs/start', { jobId: 'subagent-1', kind: 'subagent', label: 'look it up', ref: childId }],
      ['jobs/end', { jobId: 'subagent-1', status: 'killed', cause: 'owner', notice: true }],
    ])
    const { agent } = await root.agents.resume(parent.session.id)
    await agent.send('go on')
    await agent.send('and now?')
    // The last request holds the whole conversation: every notice it was ever told.
    const told = laterUserText(llm.requests.at(-1)!)
    expect(told.match(/Background job subagent-1 \(look it up\) was killed because its agent closed\./g)).toHaveLength(1)
    await agent.close()
  })

  it('answers run_in_background without @rein/jobs with SUBAGENT_NO_JOBS, and starts no child', async () => {
    const { root, create } = await boot(byTask({
      'start': [[call('subagent', inBackground('where is x?'), 'c1')], [{ text: 'ok' }]],
    }))
    const parent = await create()
    await parent.send('start')
    expect(resultOf(parent.session.events, 'c1')).toMatchObject({ isError: true, code: 'SUBAGENT_NO_JOBS' })
    expect(textOf(resultOf(parent.session.events, 'c1'))).toContain('needs background jobs')
    expect((await root.sessions.list()).filter((summary) => summary.depth > 0)).toEqual([])
  })
})

/** The parent's log a killed process leaves: a completed turn, and the job of its background child started, never ended. */
async function parentWithLostJob(root: Awaited<ReturnType<typeof boot>>['root']) {
  const parent = await root.sessions.create({ id: 'parent', cwd: '/w' })
  parent.append('turn/start', { turn: 1, runId: 'run_p' })
  parent.append('user/message', { message: userMessage('go') })
  parent.append('turn/end', { turn: 1, reason: 'completed' })
  parent.append('jobs/start', { jobId: 'subagent-1', kind: 'subagent', label: 'dig', ref: 'child' })
  await parent.flush()
}

describe('a background subagent whose process died', () => {
  it('leaves the child\'s log mid-turn for good when jobs reaps its job as lost', async () => {
    const { root, store } = await boot(byTask({ 'go': [[{ text: 'noted' }]] }), { jobs: {} })
    // What a killed process leaves: the parent's job started and never ended; the child mid-call.
    await parentWithLostJob(root)
    const child = await root.sessions.create({ id: 'child', cwd: '/w', parent: { sessionId: 'parent', runId: 'run_p', callId: 'c1' } })
    appendOpenCalls(child, [{ callId: 'k1', name: 'lookup', arguments: '{"word":"a"}', replaySafe: true }], { user: 'dig', turnStart: { runId: 'run_c', parentRunId: 'run_p', parentCallId: 'c1' } })
    await child.flush()
    await store.close('parent')
    await store.close('child')

    const { agent } = await root.agents.resume('parent')
    root.jobs.reap('parent')
    await vi.waitFor(async () => expect((await root.sessions.load('child')).events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'interrupted' } }))
    const events = (await root.sessions.load('child')).events
    expect(validateSessionInvariants(events)).toEqual([])
    // Closed, not continued: the lookup was not run again.
    expect(events.filter((event) => event.type === 'tool/result')).toMatchObject([{ data: { callId: 'k1', code: 'TOOL_OUTCOME_UNKNOWN' } }])
    expect(await agent.send('go on')).toMatchObject({ reason: 'completed' })
  })

  it('stops what the lost child\'s own background jobs left running, and records them ended', async () => {
    const { root, store } = await boot(byTask({ 'go': [[{ text: 'noted' }]] }), { jobs: {} })
    await parentWithLostJob(root)
    // The child had started a background command of its own; the process that ran them all died.
    const marker = `REIN_TEST_JOB=${randomUUID()}`
    const [name, value] = marker.split('=') as [string, string]
    const sleeper = spawn('sh', ['-c', 'sleep 600 & wait'], { detached: true, stdio: 'ignore', env: { ...process.env, [name]: value } })
    sleeper.unref()
    const group = sleeper.pid ?? 0
    try {
      const child = await root.sessions.create({ id: 'child', cwd: '/w', parent: { sessionId: 'parent', runId: 'run_p', callId: 'c1' } })
      appendOpenCalls(child, [{ callId: 'k1', name: 'lookup', arguments: '{"word":"a"}', replaySafe: true }], { user: 'dig', turnStart: { runId: 'run_c', parentRunId: 'run_p', parentCallId: 'c1' } })
      child.append('jobs/start', { jobId: 'bash-1', kind: 'bash', label: 'sleep 600' })
      child.append('jobs/record', { jobId: 'bash-1', marker, processGroup: group })
      await child.flush()
      await store.close('parent')
      await store.close('child')

      const { agent } = await root.agents.resume('parent')
      root.jobs.reap('parent')
      await vi.waitFor(async () => expect((await root.sessions.load('child')).events.some((event) => event.type === 'jobs/end')).toBe(true))
      const events = (await root.sessions.load('child')).events
      expect(events.find((event) => event.type === 'jobs/end')).toMatchObject({ data: { jobId: 'bash-1', status: 'killed', cause: 'lost' } })
      expect(validateSessionInvariants(events)).toEqual([])
      await vi.waitFor(() => expect(isProcessAlive(group)).toBe(false))
      await agent.close()
    } finally {
      if (group > 1 && isProcessAlive(group)) process.kill(-group, 'SIGKILL')
    }
  })

  it('closes the lost child\'s own foreground child too, without continuing it', async () => {
    const { root, store, llm } = await boot(byTask({ 'go': [[{ text: 'noted' }]] }), { jobs: {} })
    await parentWithLostJob(root)
    // The child was waiting on a foreground subagent of its own, which was mid-call too.
    const child = await root.sessions.create({ id: 'child', cwd: '/w', parent: { sessionId: 'parent', runId: 'run_p', callId: 'c1' } })
    appendOpenCalls(child, [{ callId: 'g1', name: 'subagent', arguments: JSON.stringify({ description: 'deeper', prompt: 'dig deeper' }) }], { user: 'dig', turnStart: { runId: 'run_c', parentRunId: 'run_p', parentCallId: 'c1' } })
    await child.flush()
    const grandchild = await root.sessions.create({ id: 'grandchild', cwd: '/w', parent: { sessionId: 'child', runId: 'run_c', callId: 'g1' } })
    appendOpenCalls(grandchild, [{ callId: 'k1', name: 'save', arguments: '{"text":"a"}' }], { user: 'dig deeper', turnStart: { runId: 'run_g', parentRunId: 'run_c', parentCallId: 'g1' } })
    await grandchild.flush()
    for (const id of ['parent', 'child', 'grandchild']) await store.close(id)

    const { agent } = await root.agents.resume('parent')
    root.jobs.reap('parent')
    await vi.waitFor(async () => expect((await root.sessions.load('grandchild')).events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'interrupted' } }))
    for (const id of ['child', 'grandchild']) {
      const { events } = await root.sessions.load(id)
      expect(validateSessionInvariants(events)).toEqual([])
      expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'interrupted' } })
    }
    // Paired unknown, not recovered: recovering it would have continued the grandchild.
    expect(resultOf((await root.sessions.load('child')).events, 'g1')).toMatchObject({ code: 'TOOL_OUTCOME_UNKNOWN' })
    expect(llm.requests).toEqual([])
    await agent.close()
  })
})
