/**
 * What the subagent tool refuses, and how it says so: background children past `maxBackground`,
 * a child resumed by two calls of one answer, a profile whose inherited model its provider lacks.
 */

import { userMessage, type AdapterRequest } from '@rein/llm'
import type { SessionEvent } from '@rein/session'
import { createScriptedLlm, type ScriptedTurn } from '@rein/testkit'
import { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import { boot, byTask, call, childIdOf, gates, resultOf, taskOf, textOf } from './harness.ts'

const inBackground = (prompt: string) => ({ description: prompt, prompt, run_in_background: true })

const viewer = (agent: { session: { id: string } }) => ({ sessionId: agent.session.id })

/** The recorded results of the parent's subagent calls, by call id. */
function subagentResults(events: readonly SessionEvent[], ids: readonly string[]) {
  return ids.map((id) => resultOf(events, id)!)
}

/** A tool that waits (in the parent's turn) until a job ends, so the next step starts after it. */
function awaitJobTool(root: Awaited<ReturnType<typeof boot>>['root']) {
  root.tools.register(defineTool({
    name: 'await_job',
    description: 'Waits for a job to end.',
    parameters: { job_id: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    effects: ['read'],
    execute: async (args, run) => (await root.jobs.wait(args.job_id, 60_000, run.identity!)).status,
  }))
}

describe('background subagents past maxBackground', () => {
  it('refuses a start past the cap with SUBAGENT_BACKGROUND_LIMIT, even for starts made side by side in one answer', async () => {
    const { root, create } = await boot(byTask({
      'start': [
        [call('subagent', inBackground('a'), 'c1'), call('subagent', inBackground('b'), 'c2'), call('subagent', inBackground('c'), 'c3')],
        [{ text: 'started' }],
      ],
      'a': [[call('gate', { name: 'a' }, 'g1')], [{ text: 'done a' }]],
      'b': [[call('gate', { name: 'b' }, 'g1')], [{ text: 'done b' }]],
      'c': [[call('gate', { name: 'c' }, 'g1')], [{ text: 'done c' }]],
    }), { jobs: {}, subagents: { maxBackground: 2 } })
    const { open } = gates(root)
    const parent = await create()
    await parent.send('start')
    const results = subagentResults(parent.session.events, ['c1', 'c2', 'c3'])
    expect(results.filter((result) => !result.isError)).toHaveLength(2)
    const refused = results.filter((result) => result.isError)
    expect(refused).toMatchObject([{ code: 'SUBAGENT_BACKGROUND_LIMIT' }])
    const message = textOf(refused[0])
    // The three start side by side: the third counts the two still being created.
    expect(message).toMatch(/^Error: 2 background subagents are (running|running or starting) in this conversation \((subagent-1, subagent-2|subagent-1, 1 starting in this answer|2 starting in this answer)\), the most it may run at once \(the session the user started and all its subagents, together\): wait for one of the jobs named to end/)
    expect(message).toContain('maxBackground')
    // The refused call made no child and no job.
    expect(root.jobs.list(viewer(parent)).map((job) => job.jobId)).toEqual(['subagent-1', 'subagent-2'])
    expect((await root.sessions.list()).filter((summary) => summary.depth > 0)).toHaveLength(2)
    for (const name of ['a', 'b', 'c']) open(name)
    for (const job of ['subagent-1', 'subagent-2']) await root.jobs.wait(job, 60_000, viewer(parent))
  })

  it('answers a malformed background call made at the cap with its own argument error, not SUBAGENT_BACKGROUND_LIMIT', async () => {
    const { root, create } = await boot(byTask({
      'start': [
        [call('subagent', inBackground('a'), 'c1')],
        [
          call('subagent', { ...inBackground('b'), agent: 'nope' }, 'c2'),
          call('subagent', { ...inBackground('b'), tools: ['no_such_tool'] }, 'c3'),
          call('subagent', inBackground('b'), 'c4'),
        ],
        [{ text: 'started' }],
      ],
      'a': [[call('gate', { name: 'a' }, 'g1')], [{ text: 'done a' }]],
    }), { jobs: {}, subagents: { maxBackground: 1 } })
    const { open } = gates(root)
    const parent = await create()
    await parent.send('start')
    const { events } = parent.session
    expect(resultOf(events, 'c1')).toMatchObject({ isError: false })
    expect(resultOf(events, 'c2')).toMatchObject({ isError: true, code: 'INVALID_ARGS' })
    expect(textOf(resultOf(events, 'c2'))).toContain('unknown agent "nope"')
    expect(resultOf(events, 'c3')).toMatchObject({ isError: true, code: 'INVALID_ARGS' })
    expect(textOf(resultOf(events, 'c3'))).toContain('no_such_tool')
    // A well-formed one is still refused for the cap.
    expect(resultOf(events, 'c4')).toMatchObject({ isError: true, code: 'SUBAGENT_BACKGROUND_LIMIT' })
    open('a')
    await root.jobs.wait('subagent-1', 60_000, viewer(parent))
  })

  it('frees a slot as soon as a background child is killed, fails or finishes', async () => {
    const { root, create } = await boot(byTask({
      'start': [
        [call('subagent', inBackground('a'), 'c1')],
        [call('subagent', inBackground('b'), 'c2')],
        [call('job_kill', { job_id: 'subagent-1' }, 'c3')],
        [call('subagent', inBackground('b'), 'c4')],
        [call('await_job', { job_id: 'subagent-2' }, 'c5')],
        [call('subagent', inBackground('c'), 'c6')],
        [call('await_job', { job_id: 'subagent-3' }, 'c7')],
        [call('subagent', inBackground('d'), 'c8')],
        [call('await_job', { job_id: 'subagent-4' }, 'c9')],
        [{ text: 'all done' }],
      ],
      'a': [[call('gate', { name: 'a' }, 'g1')], [{ text: 'never' }]],
      // Fails at once: its job ends failed.
      'b': [{ steps: [], finish: 'error', failure: { code: 'SERVER', message: 'the server broke' } }],
      'c': [[{ text: 'c answered' }]],
      'd': [[{ text: 'd answered' }]],
    }), { jobs: {}, subagents: { maxBackground: 1 } })
    gates(root)
    awaitJobTool(root)
    const parent = await create()
    expect((await parent.send('start')).text).toBe('all done')
    const { events } = parent.session
    expect(resultOf(events, 'c2')).toMatchObject({ isError: true, code: 'SUBAGENT_BACKGROUND_LIMIT' })
    expect(textOf(resultOf(events, 'c2'))).toMatch(/^Error: 1 background subagent is running in this conversation \(subagent-1\), the most it may run at once/)
    for (const id of ['c4', 'c6', 'c8']) expect(resultOf(events, id)).toMatchObject({ isError: false })
    expect(root.jobs.list(viewer(parent)).map((job) => [job.jobId, job.status])).toEqual([
      ['subagent-1', 'killed'], ['subagent-2', 'failed'], ['subagent-3', 'done'], ['subagent-4', 'done'],
    ])
  })

  it('frees the slot of a background child cancelled by its parent\'s close: the resumed parent starts another', async () => {
    const { root, create } = await boot(byTask({
      'start': [[call('subagent', inBackground('a'), 'c1')], [{ text: 'started' }], [call('subagent', inBackground('b'), 'c2')], [{ text: 'again' }]],
      'a': [[call('gate', { name: 'a' }, 'g1')], [{ text: 'never' }]],
      'b': [[{ text: 'b answered' }]],
    }), { jobs: {}, subagents: { maxBackground: 1 } })
    const { entered } = gates(root)
    const parent = await create()
    await parent.send('start')
    await entered('a')
    await parent.close()
    const { agent } = await root.agents.resume(parent.session.id)
    expect((await agent.send('go on')).text).toBe('again')
    expect(resultOf(agent.session.events, 'c2')).toMatchObject({ isError: false })
    await root.jobs.wait('subagent-2', 60_000, viewer(agent))
    await agent.close()
  })

  it('does not count the background children a crashed process left: after the crash the parent may start its full share', async () => {
    const { root, store } = await boot(byTask({
      'go': [[call('subagent', inBackground('a'), 'c1')], [{ text: 'started' }]],
      'a': [[{ text: 'a answered' }]],
    }), { jobs: {}, subagents: { maxBackground: 1 } })
    // What a killed process leaves: the parent's job of a background child started, never ended.
    const parent = await root.sessions.create({ id: 'parent', cwd: '/w' })
    parent.append('turn/start', { turn: 1, runId: 'run_p' })
    parent.append('user/message', { message: userMessage('go') })
    parent.append('turn/end', { turn: 1, reason: 'completed' })
    parent.append('jobs/start', { jobId: 'subagent-1', kind: 'subagent', label: 'dig', ref: 'child' })
    await parent.flush()
    await store.close('parent')
    const { agent } = await root.agents.resume('parent')
    await agent.send('start another')
    expect(resultOf(agent.session.events, 'c1')).toMatchObject({ isError: false })
    expect(textOf(resultOf(agent.session.events, 'c1'))).toMatch(/ as job subagent-2;/)
    await root.jobs.wait('subagent-2', 60_000, viewer(agent))
    await root.subagents.settled()
    await agent.close()
  })

  it('does not let 4 background children each start 4 more under maxBackground 4: the cap holds for the tree the user started', async () => {
    const names = ['a1', 'a2', 'a3', 'a4']
    const { root, create } = await boot(byTask({
      'start': [
        names.map((name, i) => call('subagent', inBackground(name), `c${i + 1}`)),
        ...names.map((_name, i) => [call('await_job', { job_id: `subagent-${i + 1}` }, `w${i + 1}`)]),
        [{ text: 'done' }],
      ],
      ...Object.fromEntries(names.map((name) => [name, [
        [call('gate', { name }, 'g1')],
        [call('subagent', inBackground(`${name}-more`), 'k1')],
        [{ text: `${name} answered` }],
      ]])),
      ...Object.fromEntries(names.map((name) => [`${name}-more`, [[{ text: 'never' }]]])),
    }), { jobs: {}, subagents: { maxBackground: 4 } })
    const { entered, open } = gates(root)
    awaitJobTool(root)
    const parent = await create()
    const turn = parent.send('start')
    // All four run (their jobs listed) before any of them asks for one of its own.
    await Promise.all(names.map(entered))
    for (const name of names) open(name)
    expect((await turn).text).toBe('done')
    const { events } = parent.session
    for (const id of ['c1', 'c2', 'c3', 'c4']) expect(resultOf(events, id)).toMatchObject({ isError: false })
    for (const id of ['c1', 'c2', 'c3', 'c4']) {
      const child = await root.sessions.load(/Started subagent (\S+) as job/.exec(textOf(resultOf(events, id)))![1]!)
      expect(resultOf(child.events, 'k1')).toMatchObject({ isError: true, code: 'SUBAGENT_BACKGROUND_LIMIT' })
      // The child's own job is its parent's: none of the four is its to wait for or stop.
      expect(textOf(resultOf(child.events, 'k1'))).toMatch(/^Error: 4 background subagents are running in this conversation \(4 of other agents\), the most it may run at once \(the session the user started and all its subagents, together\): none of them is yours to wait for or stop, so run this one without run_in_background\. The limit is maxBackground \(4\)/)
    }
    expect((await root.sessions.list()).filter((summary) => summary.depth > 1)).toEqual([])
  })

  it('lets a background child start its own while the tree has room, and counts it against the tree: its next start is refused', async () => {
    const { root, create } = await boot(byTask({
      'start': [[call('subagent', inBackground('a'), 'c1')], [call('await_job', { job_id: 'subagent-1' }, 'c2')], [{ text: 'done' }]],
      'a': [[call('subagent', inBackground('a2'), 'k1')], [call('subagent', inBackground('a3'), 'k2')], [call('await_job', { job_id: 'subagent-2' }, 'k3')], [{ text: 'a answered' }]],
      'a2': [[call('gate', { name: 'a2' }, 'g1')], [{ text: 'a2 answered' }]],
      'a3': [[{ text: 'never' }]],
    }), { jobs: {}, subagents: { maxBackground: 2 } })
    const { open } = gates(root)
    awaitJobTool(root)
    const dispose = root.on('agent/tool-end', (event) => {
      if (event.callId === 'k2') open('a2')
    })
    const parent = await create()
    expect((await parent.send('start')).text).toBe('done')
    dispose()
    const childId = /Started subagent (\S+) as job/.exec(textOf(resultOf(parent.session.events, 'c1')))![1]!
    const child = await root.sessions.load(childId)
    expect(resultOf(child.events, 'k1')).toMatchObject({ isError: false })
    expect(textOf(resultOf(child.events, 'k1'))).toMatch(/ as job subagent-2;/)
    expect(resultOf(child.events, 'k2')).toMatchObject({ isError: true, code: 'SUBAGENT_BACKGROUND_LIMIT' })
    expect(textOf(resultOf(child.events, 'k2'))).toMatch(/^Error: 2 background subagents are running in this conversation \(subagent-2, 1 of other agents\), the most it may run at once \(the session the user started and all its subagents, together\): wait for one of the jobs named to end/)
    expect((await root.sessions.list()).filter((summary) => summary.depth > 1)).toHaveLength(1)
  })

  it('answers a background resume made at the cap for what it names first: not a child of the caller, no such session, or busy', async () => {
    const { root, create } = await boot((request: AdapterRequest): ScriptedTurn => {
      const answered = request.messages.filter((message) => message.role === 'assistant').length
      if (taskOf(request) === 'a') return [[call('gate', { name: 'a' }, 'g1')], [{ text: 'a answered' }]][answered]!
      if (taskOf(request) === 'stranger') return [[{ text: 'hello' }]][answered]!
      if (taskOf(request) === 'f') return [[{ text: 'f answered' }]][answered]!
      // The foreground child's session (its result's), and the background one's (its started result's).
      const finishedId = childIn(request)
      const id = /Started subagent (\S+) as job/.exec(JSON.stringify(request.messages))?.[1] ?? 'none'
      return [
        [call('subagent', { description: 'f', prompt: 'f' }, 'c0')],
        [call('subagent', inBackground('a'), 'c1')],
        [
          call('subagent', { ...inBackground('more'), resume: strangerId }, 'c2'),
          call('subagent', { ...inBackground('more'), resume: 'nowhere' }, 'c3'),
          call('subagent', { ...inBackground('more'), resume: id }, 'c4'),
          call('subagent', inBackground('b'), 'c5'),
          call('subagent', { ...inBackground('more'), resume: finishedId }, 'c6'),
        ],
        [{ text: 'done' }],
      ][answered]!
    }, { jobs: {}, subagents: { maxBackground: 1 } })
    const { open } = gates(root)
    // A session of the store that no call of the parent's started.
    const stranger = await create()
    await stranger.send('stranger')
    const strangerId = stranger.session.id
    await stranger.close()
    const parent = await create()
    expect((await parent.send('start')).text).toBe('done')
    const { events } = parent.session
    expect(resultOf(events, 'c2')).toMatchObject({ isError: true, code: 'INVALID_ARGS' })
    expect(textOf(resultOf(events, 'c2'))).toContain(`session ${strangerId} is not one of your subagents`)
    expect(resultOf(events, 'c3')).toMatchObject({ isError: true, code: 'INVALID_ARGS' })
    expect(textOf(resultOf(events, 'c3'))).toContain('no subagent session "nowhere"')
    expect(resultOf(events, 'c4')).toMatchObject({ isError: true, code: 'SUBAGENT_BUSY' })
    expect(textOf(resultOf(events, 'c4'))).toContain('is running in the background as job subagent-1')
    // A start, or a resume of a finished child of its own, is still refused for the cap.
    expect(resultOf(events, 'c5')).toMatchObject({ isError: true, code: 'SUBAGENT_BACKGROUND_LIMIT' })
    expect(resultOf(events, 'c6')).toMatchObject({ isError: true, code: 'SUBAGENT_BACKGROUND_LIMIT' })
    expect(textOf(resultOf(events, 'c6'))).toBe(textOf(resultOf(events, 'c5')))
    open('a')
    await root.jobs.wait('subagent-1', 60_000, viewer(parent))
    expect(root.jobs.list(viewer(parent)).map((job) => job.jobId)).toEqual(['subagent-1'])
  })
})

describe('a subagent resumed by two calls of one answer', () => {
  it('refuses the second with SUBAGENT_BUSY saying another call of this answer holds it, and to resume it in a later answer', async () => {
    const { root, create } = await boot((request: AdapterRequest): ScriptedTurn => {
      const answered = request.messages.filter((message) => message.role === 'assistant').length
      if (taskOf(request) === 'dig') return [[{ text: 'x' }], [call('gate', { name: 'resumed' }, 'g1')], [{ text: 'y' }], [{ text: 'z' }]][answered]!
      const id = childIn(request)
      return [
        [call('subagent', { description: 'dig', prompt: 'dig', tools: ['gate'] }, 'c1')],
        // Tools that only read: the two calls run side by side.
        [
          call('subagent', { description: 'more', prompt: 'and y?', tools: ['gate'], resume: id }, 'c2'),
          call('subagent', { description: 'more', prompt: 'and z?', tools: ['gate'], resume: id }, 'c3'),
        ],
        [call('subagent', { description: 'more', prompt: 'and z?', tools: ['gate'], resume: id }, 'c4')],
        [{ text: 'done' }],
      ][answered]!
    })
    const { open } = gates(root)
    const parent = await create()
    // The resumed child waits at its gate until the other call has ended (results are committed in
    // the answer's order, so the agent's own tool-end for c3 comes only after c2's).
    const dispose = root.on('agent/tool-end', (event) => {
      if (event.callId === 'c3') open('resumed')
    })
    expect((await parent.send('start')).text).toBe('done')
    dispose()
    const { events } = parent.session
    const childId = childIdOf(textOf(resultOf(events, 'c1')))
    expect(textOf(resultOf(events, 'c2'))).toMatch(/^y\n/)
    expect(resultOf(events, 'c3')).toMatchObject({ isError: true, code: 'SUBAGENT_BUSY' })
    const message = textOf(resultOf(events, 'c3'))
    expect(message).toContain(`subagent session ${childId} is being resumed by another call of yours in this same answer (c2)`)
    expect(message).toContain('wait for that call\'s result, then resume it in a later answer')
    expect(message).not.toMatch(/background|another process/)
    // Once that call answered, the next answer resumes it.
    expect(textOf(resultOf(events, 'c4'))).toMatch(/^z\n/)
  })

  it('keeps the background wording when the child runs as a job', async () => {
    const { root, create } = await boot((request: AdapterRequest): ScriptedTurn => {
      const answered = request.messages.filter((message) => message.role === 'assistant').length
      if (taskOf(request) === 'dig') return [[{ text: 'x' }], [call('gate', { name: 'resumed' }, 'g1')], [{ text: 'y' }]][answered]!
      const id = childIn(request)
      return [
        [call('subagent', { description: 'dig', prompt: 'dig', tools: ['gate'] }, 'c1')],
        [
          call('subagent', { description: 'more', prompt: 'and y?', tools: ['gate'], resume: id, run_in_background: true }, 'c2'),
          call('subagent', { description: 'more', prompt: 'and z?', tools: ['gate'], resume: id }, 'c3'),
        ],
        [{ text: 'done' }],
      ][answered]!
    }, { jobs: {} })
    const { open } = gates(root)
    const parent = await create()
    expect((await parent.send('start')).text).toBe('done')
    const message = textOf(resultOf(parent.session.events, 'c3'))
    expect(resultOf(parent.session.events, 'c3')).toMatchObject({ isError: true, code: 'SUBAGENT_BUSY' })
    // Its job id is told once the job exists; the two calls run side by side.
    expect(message).toMatch(/is running in the background( as job subagent-1)?, so it cannot be resumed now: wait for its notice/)
    open('resumed')
    await root.jobs.wait('subagent-1', 60_000, viewer(parent))
  })
})

/** The child session id the request's last subagent result names. */
function childIn(request: AdapterRequest): string {
  const text = request.messages.flatMap((message) => message.content).map((block) => (block.type === 'tool-result' ? JSON.stringify(block) : '')).join('')
  return [...text.matchAll(/subagent session ([^\s,;)\\]+)/g)].map((match) => match[1]!).at(-1) ?? 'none'
}

describe('a profile that names a provider but no model', () => {
  /** The harness's stack plus a second route, `other`, whose catalog lists `catalog` (only `x` by default). */
  async function withOther(profiles: Record<string, { provider: string }>, catalog: readonly string[] = ['x']) {
    const booted = await boot(byTask({
      'start': [[call('subagent', { description: 'dig', prompt: 'dig', agent: Object.keys(profiles)[0] }, 'c1')], [{ text: 'done' }]],
      'dig': [[{ text: 'found' }]],
    }), { subagents: { profiles } })
    const other = createScriptedLlm(byTask({ 'dig': [[{ text: 'found elsewhere' }]] }), { models: catalog.map((id) => ({ id })) })
    booted.root.llm.registerAdapter('other', other)
    return { ...booted, other }
  }

  it('is refused before any child exists when its provider\'s catalog lacks the parent\'s model, naming the profile and the model to add', async () => {
    const { root, create, other } = await withOther({ elsewhere: { provider: 'other' } })
    const parent = await create()
    await parent.send('start')
    expect(resultOf(parent.session.events, 'c1')).toMatchObject({ isError: true, code: 'SUBAGENT_PROFILE_INVALID' })
    expect(textOf(resultOf(parent.session.events, 'c1'))).toBe('Error: the subagent profile "elsewhere" cannot be used: it names provider "other" but no model, so its subagent would run your model "m", which other\'s model catalog does not list: call subagent without agent "elsewhere", and tell the user to add profiles.elsewhere.model (one of: x) to the @rein/subagents config')
    expect(other.requests).toEqual([])
    expect((await root.sessions.list()).filter((summary) => summary.depth > 0)).toEqual([])
  })

  it('ends a call cancelled while the profile\'s provider looks its catalog up, without waiting for the catalog to answer', async () => {
    const { root, create, other } = await withOther({ elsewhere: { provider: 'other' } })
    let entered!: () => void
    const asked = new Promise<void>((resolve) => { entered = resolve })
    // A catalog over the network that never answers: only the caller's signal ends its wait.
    const hanging = (_provider: string, _model: string, signal?: AbortSignal) => new Promise<undefined>((_resolve, reject) => {
      entered()
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true })
    })
    Object.assign(other, { resolveModel: hanging })
    const parent = await create()
    const turn = parent.send('start')
    await asked
    parent.cancel()
    await turn
    expect(resultOf(parent.session.events, 'c1')).toMatchObject({ isError: true, code: 'ABORTED_BEFORE_DISPATCH' })
    expect(other.requests).toEqual([])
    expect((await root.sessions.list()).filter((summary) => summary.depth > 0)).toEqual([])
  })

  it('passes the load check, and runs the parent\'s model on a provider whose catalog lists it', async () => {
    // A second route to the same service: its catalog lists the parent's model.
    const { root, create, other } = await withOther({ backup: { provider: 'other' } }, ['m', 'x'])
    const problems: string[] = []
    await root.parallel('compose/check', problems)
    expect(problems).toEqual([])
    const parent = await create()
    await parent.send('start')
    expect(textOf(resultOf(parent.session.events, 'c1'))).toMatch(/^found elsewhere\n/)
    expect(other.requests.map((request) => request.model)).toEqual(['m'])
  })

  it('runs the parent\'s model when it names the parent\'s own provider, even one its catalog does not list', async () => {
    const { root, create, llm } = await withOther({ mine: { provider: 'scripted' } })
    const problems: string[] = []
    await root.parallel('compose/check', problems)
    expect(problems).toEqual([])
    // A model scripted's catalog does not list: the parent runs it all the same, and so does the child.
    const parent = await create({ model: 'unlisted' })
    await parent.send('start')
    expect(textOf(resultOf(parent.session.events, 'c1'))).toMatch(/^found\n/)
    expect(llm.requests.filter((request) => taskOf(request) === 'dig').map((request) => request.model)).toEqual(['unlisted'])
  })
})
