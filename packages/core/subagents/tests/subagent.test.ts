import type { RepairEndEvent } from '@rein/agent'
import { eventData } from '@rein/session'
import { defineTool } from '@rein/tools'
import type { TelemetryRecord } from '@rein/telemetry'
import { validateSessionInvariants, type ScriptedTurn } from '@rein/testkit'
import { describe, expect, it } from 'vitest'
import { boot, byTask, call, childIdOf, resultOf, taskOf, textOf, usage, type BootOptions } from './harness.ts'

const ask = (prompt: string, extra: Record<string, unknown> = {}) => ({ description: 'look it up', prompt, ...extra })

describe('the subagent tool', () => {
  it('returns the child\'s final answer and session id; the child\'s header links it to the parent\'s call', async () => {
    const { root, create } = await boot(byTask({
      'find x': [[call('subagent', ask('where is x?'), 'c1')], [{ text: 'done' }]],
      'where is x?': [[call('lookup', { word: 'x' }, 'k1')], [{ text: 'x is in the drawer' }]],
    }))
    const parent = await create()
    const turn = await parent.send('find x')
    expect(turn.text).toBe('done')
    const result = resultOf(parent.session.events, 'c1')!
    expect(result.isError).toBe(false)
    const childId = childIdOf(textOf(result))
    expect(textOf(result)).toMatch(new RegExp(`^x is in the drawer\\n\\(subagent session ${childId}, cost [0-9.]+\\)$`))
    const child = await root.sessions.load(childId!)
    expect(child.header).toMatchObject({ parentSessionId: parent.session.id, parentRunId: turn.runId, parentCallId: 'c1', depth: 1 })
    expect(child.events.findLast((event) => event.type === 'turn/end')!.data).toMatchObject({ reason: 'completed' })
    // Nothing left running or open: the child agent was closed.
    expect(root.agents.list()).toEqual([parent])
  })

  it('shows the parent\'s listeners the child\'s progress under the call, as subagent events', async () => {
    const { create } = await boot(byTask({
      'find x': [[call('subagent', ask('where is x?'), 'c1')], [{ text: 'done' }]],
      'where is x?': [[call('lookup', { word: 'x' }, 'k1')], [{ text: 'x is in the drawer' }]],
    }))
    const parent = await create()
    const relayed: { callId: string; type: string }[] = []
    parent.subscribe((event) => { if (event.type === 'subagent') relayed.push({ callId: event.callId, type: event.event.type }) })
    await parent.send('find x')
    expect(relayed.filter((event) => event.type === 'tool-start' || event.type === 'tool-end')).toEqual([{ callId: 'c1', type: 'tool-start' }, { callId: 'c1', type: 'tool-end' }])
    expect(relayed.at(-1)).toEqual({ callId: 'c1', type: 'turn-end' })
  })

  it('applies a profile: its system prompt reaches the child\'s request and its tools narrow the child\'s', async () => {
    const { llm, create } = await boot(byTask({
      'review': [[call('subagent', ask('check it', { agent: 'reviewer' }), 'c1')], [{ text: 'ok' }]],
      'check it': [[{ text: 'looks fine' }]],
    }), { subagents: { profiles: { reviewer: { description: 'Reviews changes.', system: 'You review code.', tools: ['lookup'] } } } })
    const parent = await create()
    await parent.send('review')
    const childRequest = llm.requests.find((request) => taskOf(request) === 'check it')!
    expect(childRequest.system).toContain('You review code.')
    expect(childRequest.tools!.map((tool) => tool.name)).toEqual(['lookup'])
    const parentRequest = llm.requests.find((request) => taskOf(request) === 'review')!
    expect(parentRequest.tools!.find((tool) => tool.name === 'subagent')!.description).toContain('- reviewer: Reviews changes.')
  })

  it('narrows the child\'s tools by the call\'s tools argument too', async () => {
    const { llm, create } = await boot(byTask({
      'go': [[call('subagent', ask('just read', { tools: ['lookup', 'subagent'] }), 'c1')], [{ text: 'ok' }]],
      'just read': [[{ text: 'read' }]],
    }))
    await (await create()).send('go')
    expect(llm.requests.find((request) => taskOf(request) === 'just read')!.tools!.map((tool) => tool.name)).toEqual(['lookup', 'subagent'])
  })

  it('gives a child whose call asks for tools: [] no tool at all, not every tool', async () => {
    const { llm, create } = await boot(byTask({
      'go': [[call('subagent', ask('just think', { tools: [] }), 'c1')], [{ text: 'ok' }]],
      'just think': [[call('lookup', { word: 'a' }, 'k1')], [{ text: 'thought' }]],
    }))
    const parent = await create()
    await parent.send('go')
    const requests = llm.requests.filter((request) => taskOf(request) === 'just think')
    expect(requests[0]!.tools ?? []).toEqual([])
    // The child's call to a tool it was not given is refused, not run.
    expect(JSON.stringify(requests[1]!.messages)).toContain('unknown tool \\"lookup\\"; available tools: none')
  })

  it('answers an unknown agent with INVALID_ARGS listing the profiles, and starts no child', async () => {
    const { root, create } = await boot(byTask({
      'go': [[call('subagent', ask('x', { agent: 'nobody' }), 'c1')], [{ text: 'ok' }]],
    }), { subagents: { profiles: { reviewer: {}, researcher: {} } } })
    const parent = await create()
    await parent.send('go')
    const result = resultOf(parent.session.events, 'c1')!
    expect(result).toMatchObject({ isError: true, code: 'INVALID_ARGS' })
    expect(textOf(result)).toContain('the agents are: reviewer, researcher')
    expect((await root.sessions.list()).filter((summary) => summary.depth > 0)).toEqual([])
  })

  it('says BUDGET_EXHAUSTED, not that the profile is broken, when the parent\'s turn has nothing left', async () => {
    const { create } = await boot(byTask({
      'go': [[call('subagent', ask('where is x?', { agent: 'r' }), 'c1')], [{ text: 'never' }]],
    }), { subagents: { profiles: { r: { description: 'Reads.' } } } })
    const parent = await create({ maxSteps: 1 })
    await parent.send('go')
    expect(resultOf(parent.session.events, 'c1')).toMatchObject({ isError: true, code: 'BUDGET_EXHAUSTED' })
  })

  it('answers a tools argument naming no registered tool with INVALID_ARGS', async () => {
    const { create } = await boot(byTask({
      'go': [[call('subagent', ask('x', { tools: ['lookup', 'nope'] }), 'c1')], [{ text: 'ok' }]],
    }))
    const parent = await create()
    await parent.send('go')
    expect(resultOf(parent.session.events, 'c1')).toMatchObject({ isError: true, code: 'INVALID_ARGS' })
    expect(textOf(resultOf(parent.session.events, 'c1'))).toContain('"nope", which is not one of your tools')
  })

  it('refuses an exclusion naming no registered tool (the tool meant would stay), and takes one naming a tool the caller lacks', async () => {
    const { llm, create } = await boot(byTask({
      'go': [[call('subagent', ask('x', { tools: ['!sve'] }), 'c1')], [call('subagent', ask('y', { tools: ['!save'] }), 'c2')], [{ text: 'ok' }]],
      'y': [[{ text: 'Y' }]],
    }))
    const parent = await create({ tools: ['lookup', 'subagent'] })
    await parent.send('go')
    expect(resultOf(parent.session.events, 'c1')).toMatchObject({ isError: true, code: 'INVALID_ARGS' })
    expect(textOf(resultOf(parent.session.events, 'c1'))).toContain('"sve"')
    expect(resultOf(parent.session.events, 'c2')).toMatchObject({ isError: false })
    expect(llm.requests.find((request) => taskOf(request) === 'y')!.tools!.map((tool) => tool.name)).toEqual(['lookup', 'subagent'])
  })

  it('tells a model whose tools argument is malformed that it is, listing its own tools, not that a tool named "" does not exist nor tools that do not exist', async () => {
    for (const tools of [['!'], [''], ['lookup', '!']]) {
      const { create } = await boot(byTask({
        'go': [[call('subagent', ask('x', { tools }), 'c1')], [{ text: 'ok' }]],
      }))
      const parent = await create({ tools: ['lookup', 'subagent'] })
      await parent.send('go')
      const result = resultOf(parent.session.events, 'c1')!
      expect(result).toMatchObject({ isError: true, code: 'INVALID_ARGS' })
      expect(textOf(result)).toContain('your tools: lookup, subagent')
      expect(textOf(result)).not.toContain('no such tool')
      // The example it gives names no tool that is not there (there is no fs_read).
      expect(textOf(result)).not.toContain('fs_')
    }
  })

  it('refuses a tools argument naming a tool the caller itself may not use, instead of starting a child silently without it', async () => {
    const { root, llm, create } = await boot(byTask({
      'go': [[call('subagent', ask('write it down', { tools: ['save'] }), 'c1')], [{ text: 'ok' }]],
      'write it down': [[{ text: 'I have no tool to save with' }]],
    }))
    const parent = await create({ tools: ['lookup', 'subagent'] })
    await parent.send('go')
    const result = resultOf(parent.session.events, 'c1')!
    expect(result).toMatchObject({ isError: true, code: 'INVALID_ARGS' })
    expect(textOf(result)).toContain('save')
    expect(textOf(result)).toContain('your tools: lookup, subagent')
    expect(llm.requests.some((request) => taskOf(request) === 'write it down')).toBe(false)
    expect((await root.sessions.list()).filter((summary) => summary.depth > 0)).toEqual([])
  })

  it('does not list recall_result among the tools a model may hand a child before its session was compacted', async () => {
    const { create } = await boot(byTask({
      'go': [[call('subagent', ask('x', { tools: ['recall_result'] }), 'c1')], [{ text: 'ok' }]],
    }))
    const parent = await create()
    await parent.send('go')
    const result = resultOf(parent.session.events, 'c1')!
    expect(result).toMatchObject({ isError: true, code: 'INVALID_ARGS' })
    expect(textOf(result)).toContain('your tools: lookup, save, subagent')
  })

  it('answers an empty or blank prompt with INVALID_ARGS, and starts no child to spend on nothing', async () => {
    for (const prompt of ['', '   \n']) {
      const { llm, create } = await boot(byTask({
        'go': [[call('subagent', { description: 'd', prompt }, 'c1')], [{ text: 'ok' }]],
      }))
      const parent = await create()
      await parent.send('go')
      expect(resultOf(parent.session.events, 'c1')).toMatchObject({ isError: true, code: 'INVALID_ARGS' })
      expect(llm.requests).toHaveLength(2)
    }
  })

  it('is not offered to a run at maxDepth, and a direct call there errors', async () => {
    const { llm, create } = await boot(byTask({
      'top': [[call('subagent', ask('middle'), 'c1')], [{ text: 'top done' }]],
      'middle': [[call('subagent', ask('bottom'), 'c2')], [{ text: 'middle done' }]],
    }), { subagents: { maxDepth: 1 } })
    const parent = await create()
    await parent.send('top')
    const names = (task: string) => llm.requests.find((request) => taskOf(request) === task)!.tools!.map((tool) => tool.name)
    expect(names('top')).toContain('subagent')
    expect(names('middle')).not.toContain('subagent')
    // The depth-1 child called it anyway: an error result in its log, paired, no grandchild.
    const child = parent.session.events.find((event) => event.type === 'tool/result')!
    expect(eventData(child, 'tool/result').isError).toBe(false)
    const middleAnswer = llm.requests.filter((request) => taskOf(request) === 'middle')[1]!
    const refused = middleAnswer.messages.at(-1)!.content[0]!
    expect(refused.type === 'tool-result' && refused.isError).toBe(true)
    expect(llm.requests.some((request) => taskOf(request) === 'bottom')).toBe(false)
  })

  it('refuses through ctx.subagents.run from a run at maxDepth with SUBAGENT_DEPTH', async () => {
    const { root } = await boot(byTask({}), { subagents: { maxDepth: 2 } })
    const identity = { agent: 'main', sessionId: 's', conversationId: 's', runId: 'r', turnId: 't', anchor: 'a', depth: 2 }
    await expect(root.subagents.run({ prompt: 'x', call: { callId: 'c', sessionId: 's', identity, signal: new AbortController().signal } }))
      .rejects.toMatchObject({ code: 'SUBAGENT_DEPTH' })
  })
})

describe('cancelling a subagent call', () => {
  /** `gate`: blocks until its call is cancelled; `entered` resolves once a body is waiting. */
  function gateTool(root: Awaited<ReturnType<typeof boot>>['root']) {
    let entered!: () => void
    const ready = new Promise<void>((resolve) => { entered = resolve })
    root.tools.register(defineTool({
      name: 'gate',
      description: 'Waits.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      effects: ['read'],
      execute: (_args, run) => new Promise<string>((_resolve, reject) => {
        entered()
        run.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true })
      }),
    }))
    return ready
  }

  const script = byTask({
    'go': [[call('probe', {}, 'p1')], [{ text: 'ok' }]],
    'dig': [[{ text: 'partial findings' }, call('gate', {}, 'g1')]],
  })

  it('rejects with the child\'s partial answer and session id; the child\'s log ends aborted', async () => {
    const { root, create } = await boot(script)
    const ready = gateTool(root)
    const controller = new AbortController()
    let failure: unknown
    root.tools.register(defineTool({
      name: 'probe',
      description: 'Delegates with a signal the test holds.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: async (_args, run) => {
        await root.subagents.run({ prompt: 'dig', call: { ...run, callId: run.callId, signal: controller.signal } }).catch((error: unknown) => { failure = error })
        return 'probed'
      },
    }))
    const parent = await create()
    const turn = parent.send('go')
    await ready
    controller.abort()
    await turn
    expect(failure).toMatchObject({ code: 'SUBAGENT_CANCELLED', details: { reason: 'aborted', partial: 'partial findings' } })
    const sessionId = (failure as { details: { sessionId: string } }).details.sessionId
    expect((failure as Error).message).toContain(`subagent session ${sessionId}`)
    expect((failure as Error).message).toContain('partial findings')
    const child = await root.sessions.load(sessionId)
    expect(child.events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    expect(root.agents.list()).toEqual([parent])
  })

  it('waits forever on a child that never finishes when nothing limits its time', async () => {
    // The gate never opens: only the profile's time limit can end the child.
    const { root, create } = await boot(byTask({
      'go': [[call('subagent', ask('dig', { agent: 'quick' }), 'c1')], [{ text: 'moved on' }]],
      'dig': [[{ text: 'half of it' }, call('gate', {}, 'g1')]],
    }), { subagents: { profiles: { quick: { timeoutMs: 20 } } } })
    void gateTool(root)
    const parent = await create()
    expect(await parent.send('go')).toMatchObject({ reason: 'completed', text: 'moved on' })
    const result = resultOf(parent.session.events, 'c1')!
    expect(result).toMatchObject({ isError: true, code: 'SUBAGENT_TIMEOUT' })
    expect(textOf(result)).toContain('ran past its limit of 20 ms')
    expect(textOf(result)).toContain('half of it')
    const childId = childIdOf(textOf(result))
    expect((await root.sessions.load(childId)).events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    expect(root.agents.list()).toEqual([parent])
  })

  it('lets a child run to its end when the call is cancelled while the child is being made', async () => {
    const { root, llm, create } = await boot(byTask({
      'go': [[call('probe', {}, 'p1')], [{ text: 'ok' }]],
      'dig': [[call('lookup', { word: 'a' }, 'k1')], [call('lookup', { word: 'b' }, 'k2')], [{ text: 'all done' }]],
    }))
    let outcome: unknown
    root.tools.register(defineTool({
      name: 'probe',
      description: 'Delegates, and cancels at once.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: async (_args, run) => {
        const controller = new AbortController()
        const running = root.subagents.run({ prompt: 'dig', call: { ...run, callId: run.callId, signal: controller.signal } })
        controller.abort()
        outcome = await running.then(() => 'completed', (error: { code: string }) => error.code)
        return 'probed'
      },
    }))
    const parent = await create()
    await parent.send('go')
    expect(outcome).toBe('ABORTED_BEFORE_DISPATCH')
    expect(llm.requests.filter((request) => taskOf(request) === 'dig')).toEqual([])
    expect(root.agents.list()).toEqual([parent])
  })

  it('cancelling the parent\'s turn cancels the child: its log ends aborted, it is closed, and the call\'s result keeps what it had', async () => {
    const { root, create } = await boot(byTask({
      'go': [[call('subagent', ask('dig'), 'c1')]],
      'dig': [[{ text: 'partial findings' }, call('gate', {}, 'g1')]],
    }))
    const ready = gateTool(root)
    const parent = await create()
    const turn = parent.send('go')
    await ready
    parent.cancel()
    expect(await turn).toMatchObject({ reason: 'aborted' })
    // The call waits (cancelGraceMs) for the child to end: its result keeps what the child had.
    expect(root.agents.list()).toEqual([parent])
    const childId = (await root.sessions.list()).find((summary) => summary.parentCallId === 'c1')!.id
    expect((await root.sessions.load(childId)).events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    const result = resultOf(parent.session.events, 'c1')!
    expect(result).toMatchObject({ isError: true, code: 'SUBAGENT_CANCELLED' })
    expect(textOf(result)).toContain('partial findings')
    expect(textOf(result)).toContain(childId)
  })

  it('never continues a child its parent\'s shutdown interrupted when the call is paired with the interrupt instead of left for resume', async () => {
    const { root, llm, create } = await boot(byTask({
      'go': [[call('subagent', ask('dig'), 'c1')], [{ text: 'thanks' }]],
      'dig': [[{ text: 'partial findings' }, call('gate', {}, 'g1')], [{ text: 'dug it all' }]],
    }))
    const ready = gateTool(root)
    const parent = await create()
    const turn = parent.send('go')
    await ready
    await parent.interrupt()
    expect(await turn).toMatchObject({ reason: 'interrupted' })
    expect(root.agents.list()).toEqual([parent])
    const childId = (await root.sessions.list()).find((summary) => summary.parentCallId === 'c1')!.id
    expect((await root.sessions.load(childId)).events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'interrupted' } })
    // The call is left for the next resume, as after a crash: no result, the turn open.
    expect(resultOf(parent.session.events, 'c1')).toBeUndefined()
    expect(parent.session.events.some((event) => event.type === 'turn/end')).toBe(false)
    // The parent's next turn first continues the child once, from its log, and takes its answer.
    expect(await parent.send('more')).toMatchObject({ reason: 'completed', text: 'thanks' })
    const result = resultOf(parent.session.events, 'c1')!
    expect(result).toMatchObject({ isError: false })
    expect(textOf(result)).toContain('dug it all')
    const child = (await root.sessions.load(childId)).events
    expect(child.filter((event) => event.type === 'turn/start')).toHaveLength(2)
    expect(child.filter((event) => event.type === 'user/message')).toHaveLength(1)
    expect(llm.requests.filter((request) => taskOf(request) === 'dig')).toHaveLength(2)
    expect(root.agents.list()).toEqual([parent])
  })

  it('counts the child the parent\'s next turn continued after an interrupt in that turn\'s cost, not in no run\'s', async () => {
    const { root, create } = await boot(byTask({
      'go': [[call('subagent', ask('dig'), 'c1'), usage(10, 1)], [{ text: 'thanks' }, usage(20, 2)]],
      'dig': [[{ text: 'partial findings' }, call('gate', {}, 'g1'), usage(100, 5)], [{ text: 'dug it all' }, usage(300, 7)]],
    }), { telemetry: true })
    const ready = gateTool(root)
    const parent = await create()
    const first = parent.send('go')
    await ready
    await parent.interrupt()
    await first
    const next = await parent.send('more')
    // The continuation (300 in, 7 out) was made for this turn, before its first request: its subagent spend.
    expect(next).toMatchObject({ reason: 'completed', usage: { inputTokens: 20, outputTokens: 2 } })
    expect(next.subagents).toEqual({ usage: { inputTokens: 300, outputTokens: 7 }, cost: 314 })
    const report = root.telemetry.cost(next.runId)!
    expect(report.children).toMatchObject({ usage: { inputTokens: 300, outputTokens: 7 }, money: 314, attempts: 1 })
    expect(report.total).toMatchObject({ usage: { inputTokens: 320, outputTokens: 9 }, money: 338, attempts: 2 })
    // The child's new turn names the run it worked for.
    const childId = (await root.sessions.list()).find((summary) => summary.parentCallId === 'c1')!.id
    const starts = (await root.sessions.load(childId)).events.filter((event) => event.type === 'turn/start').map((event) => eventData(event, 'turn/start'))
    expect(starts.at(-1)).toMatchObject({ parentRunId: next.runId, parentCallId: 'c1' })
  })

  /** A parent interrupted while its child `dig` waits at the gate; `go`'s answers after the first are `later`. */
  async function interruptedAtChild(later: readonly ScriptedTurn[], options: Omit<BootOptions, 'telemetry'> & { closedHere?: boolean } = {}) {
    const { closedHere, ...bootOptions } = options
    const stack = await boot(byTask({
      'go': [[call('subagent', ask('dig'), 'c1'), usage(10, 1)], ...later],
      'dig': [[{ text: 'partial findings' }, call('gate', {}, 'g1'), usage(100, 5)], [{ text: 'dug it all' }, usage(300, 7)]],
    }), { ...bootOptions, telemetry: true })
    const ready = gateTool(stack.root)
    // A parent the test closes with its call left open is checked by the test, on the log another handle wrote.
    const parent = closedHere ? await stack.root.agents.create() : await stack.create()
    const ends: RepairEndEvent[] = []
    stack.root.on('agent/repair-end', (event) => { ends.push(event) })
    const records: TelemetryRecord[] = []
    stack.root.telemetry.sink({ name: 'recorder', emit: (record) => { records.push(record) } })
    const first = parent.send('go')
    await ready
    await parent.interrupt()
    await first
    const digRequests = () => stack.llm.requests.filter((request) => taskOf(request) === 'dig').length
    return { ...stack, parent, ends, records, digRequests }
  }

  /** The parent's log cannot be written once the child has been continued; returns how to heal it. */
  function failAfterContinuing(stack: Awaited<ReturnType<typeof interruptedAtChild>>): () => void {
    const { store, parent, digRequests } = stack
    const append = store.append.bind(store)
    store.append = async (id, events) => {
      if (id === parent.session.id && digRequests() >= 2) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })
      return append(id, events)
    }
    return () => { store.append = append }
  }

  /** The parent closed mid-child, then a resume that continued the child and failed to save; the log healed since. */
  async function afterFailedResume(later: readonly ScriptedTurn[]) {
    const stack = await interruptedAtChild(later, { closedHere: true })
    const id = stack.parent.session.id
    await stack.parent.close()
    const heal = failAfterContinuing(stack)
    await expect(stack.root.agents.resume(id)).rejects.toMatchObject({ code: 'SESSION_FLUSH_FAILED' })
    heal()
    return { stack, id }
  }

  it('counts the child a compaction\'s repair continued after an interrupt in a run of its own when the agent closes before any turn', async () => {
    const summary: ScriptedTurn = [{ text: '## Goal\nGo on.' }, usage(40, 4)]
    const { root, parent, ends, records } = await interruptedAtChild([summary, summary, summary], { contextWindow: 8_000 })
    // The compaction repairs the log first, which continues the child for the next turn's run.
    await parent.compactNow()
    expect(ends).toEqual([])
    await parent.close()
    expect(ends).toHaveLength(1)
    const [end] = ends
    expect(end).toMatchObject({ reason: 'completed', identity: { sessionId: parent.session.id } })
    const runId = end!.identity.runId
    const children = { usage: { inputTokens: 300, outputTokens: 7 }, money: 314, attempts: 1 }
    expect(root.telemetry.cost(runId)).toMatchObject({ own: { attempts: 0 }, children })
    // A sink gets it as a run, purpose `repair`, its end carrying the children's cost.
    const told = records.filter((record) => record.kind === 'run' && record.scope.runId === runId)
    expect(told).toMatchObject([{ phase: 'start', purpose: 'repair' }, { phase: 'end', purpose: 'repair', reason: 'completed', cost: { children } }])
    const childId = (await root.sessions.list()).find((summary) => summary.parentCallId === 'c1')!.id
    const starts = (await root.sessions.load(childId)).events.filter((event) => event.type === 'turn/start').map((event) => eventData(event, 'turn/start'))
    expect(starts.at(-1)).toMatchObject({ parentRunId: runId, parentCallId: 'c1' })
  })

  it('tells the child a repair continued as a child of the repair run, at the call left open, before that run itself', async () => {
    // What an exporter nests by (@rein/otel-http): the child's records come first and name a run not told yet.
    const summary: ScriptedTurn = [{ text: '## Goal\nGo on.' }, usage(40, 4)]
    const { parent, ends, records } = await interruptedAtChild([summary, summary, summary], { contextWindow: 8_000 })
    const told = records.length
    await parent.compactNow()
    await parent.close()
    const runId = ends[0]!.identity.runId
    // The compaction is a run of its own besides (told in between); the child works for the next run, not for it.
    const starts = records.slice(told).filter((record) => record.kind === 'run' && record.phase === 'start' && record.purpose !== 'compaction')
    expect(starts.map((record) => [record.scope.depth, record.scope.parentRunId, record.scope.parentCallId, record.kind === 'run' && record.purpose]))
      .toEqual([[1, runId, 'c1', undefined], [0, undefined, undefined, 'repair']])
    expect(starts[1]!.scope.runId).toBe(runId)
    // Marked so: an exporter waits for that run rather than start the child a trace of its own.
    expect(starts[0]!.scope.parentRunPending).toBe(true)
    expect(starts[1]!.scope.parentRunPending).toBeUndefined()
  })

  it('tells the repair run a continued child named as its parent even when the child spent nothing, so no trace waits for a run never told', async () => {
    const summary: ScriptedTurn = [{ text: '## Goal\nGo on.' }, usage(40, 4)]
    const { root, parent, records } = await interruptedAtChild([summary, summary, summary], { contextWindow: 8_000 })
    // The continued child's turn ends before its first step: it spends nothing.
    root.agents.section({ id: 'refuses-children', order: 1, render: ({ identity }) => { if ((identity?.depth ?? 0) > 0) throw new Error('no section for a child'); return 'Rules.' } })
    const told = records.length
    await parent.compactNow()
    await parent.close()
    const runs = records.slice(told).filter((record) => record.kind === 'run')
    const pending = runs.filter((record) => record.scope.parentRunPending).map((record) => record.scope.parentRunId)
    expect(pending.length).toBeGreaterThan(0)
    const started = new Set(runs.filter((record) => record.phase === 'start').map((record) => record.scope.runId))
    for (const runId of pending) expect(started.has(runId!)).toBe(true)
  })

  it('tells the run at close as ended in error when the repair that continued the child then could not write the log', async () => {
    const stack = await interruptedAtChild([[{ text: 'thanks' }, usage(20, 2)]])
    const heal = failAfterContinuing(stack)
    await expect(stack.parent.send('more')).rejects.toMatchObject({ code: 'SESSION_FLUSH_FAILED' })
    heal()
    await stack.parent.close()
    expect(stack.ends).toMatchObject([{ reason: 'error', errorCode: 'SESSION_FLUSH_FAILED' }])
    expect(stack.root.telemetry.cost(stack.ends[0]!.identity.runId)).toMatchObject({ children: { usage: { inputTokens: 300, outputTokens: 7 }, attempts: 1 } })
  })

  it('lets a turn retried after that failed repair take the run, counting the continuation once and telling nothing at close', async () => {
    const stack = await interruptedAtChild([[{ text: 'thanks' }, usage(20, 2)]])
    const heal = failAfterContinuing(stack)
    await expect(stack.parent.send('more')).rejects.toMatchObject({ code: 'SESSION_FLUSH_FAILED' })
    heal()
    const next = await stack.parent.send('more')
    expect(next).toMatchObject({ reason: 'completed', subagents: { usage: { inputTokens: 300, outputTokens: 7 }, cost: 314 } })
    expect(stack.root.telemetry.cost(next.runId)?.children).toMatchObject({ usage: { inputTokens: 300, outputTokens: 7 }, attempts: 1 })
    await stack.parent.close()
    expect(stack.ends).toEqual([])
    expect(stack.digRequests()).toBe(2)
  })

  it('gives a resume retried after a failed one the child the failed one continued, in its first turn\'s result and cost, counted once', async () => {
    const { stack, id } = await afterFailedResume([[{ text: 'thanks' }, usage(20, 2)]])
    const { root } = stack
    const { agent } = await root.agents.resume(id)
    try {
      const next = await agent.continue()
      // The failed resume's continuation (300 in, 7 out) was made for this turn: its subagent spend.
      expect(next).toMatchObject({ reason: 'completed', subagents: { usage: { inputTokens: 300, outputTokens: 7 }, cost: 314 } })
      expect(root.telemetry.cost(next.runId)?.children).toMatchObject({ usage: { inputTokens: 300, outputTokens: 7 }, money: 314, attempts: 1 })
    } finally {
      await agent.close()
    }
    // The turn took the run: no repair run of its own, and the child was asked once more, not twice.
    expect(stack.ends).toEqual([])
    expect(stack.records.filter((record) => record.kind === 'run' && record.purpose === 'repair')).toEqual([])
    expect(stack.digRequests()).toBe(2)
    expect(validateSessionInvariants((await root.sessions.load(id)).events)).toEqual([])
  })

  it('tells the run a failed resume\'s continuation worked for when the agents service is disposed before any retry', async () => {
    const { stack, id } = await afterFailedResume([])
    expect(stack.ends).toEqual([])
    await stack.agents.dispose()
    expect(stack.ends).toMatchObject([{ reason: 'error', errorCode: 'SESSION_FLUSH_FAILED', identity: { sessionId: id } }])
    expect(stack.root.telemetry.cost(stack.ends[0]!.identity.runId)).toMatchObject({ children: { usage: { inputTokens: 300, outputTokens: 7 }, attempts: 1 } })
  })

  it('tells the run a resume\'s continuation worked for when the agents service is disposed and the agent never closed', async () => {
    const stack = await interruptedAtChild([], { closedHere: true })
    const { root, parent } = stack
    const id = parent.session.id
    await parent.close()
    // Resumed (the child continued for the agent's next run), then the host disposes the service without agent.close().
    await root.agents.resume(id)
    expect(stack.ends).toEqual([])
    await stack.agents.dispose()
    expect(stack.ends).toMatchObject([{ reason: 'completed', identity: { sessionId: id } }])
    const runId = stack.ends[0]!.identity.runId
    expect(stack.root.telemetry.cost(runId)).toMatchObject({ own: { attempts: 0 }, children: { usage: { inputTokens: 300, outputTokens: 7 }, attempts: 1 } })
    expect(stack.records.filter((record) => record.kind === 'run' && record.scope.runId === runId)).toMatchObject([{ phase: 'start', purpose: 'repair' }, { phase: 'end', purpose: 'repair' }])
    expect(validateSessionInvariants((await root.sessions.load(id)).events)).toEqual([])
  })

  it('holds a grandchild its child\'s resume continues to what the live root\'s turn has left, not only charges it', async () => {
    // Money is input + 2 × output. The root's turn (maxCost 250) has 59 left when it resumes `mid`,
    // whose repair continues `dig`: one request (314) spends that, so dig must ask no second.
    let midId = ''
    const scripted = byTask({
      'mid': [[call('subagent', ask('dig'), 'c2'), usage(50, 3)], [{ text: 'mid done' }, usage(70, 4)]],
      'dig': [[{ text: 'partial' }, call('gate', {}, 'g1'), usage(100, 5)], [call('lookup', { word: 'x' }, 'l1'), usage(300, 7)], [{ text: 'dug' }, usage(300, 7)]],
    })
    const top_ = (answered: number) => [
      [call('subagent', ask('mid'), 'c1'), usage(10, 1)],
      [call('subagent', { description: 'again', prompt: 'again', resume: midId }, 'c3'), usage(11, 1)],
      [{ text: 'thanks' }, usage(20, 2)],
    ][answered]!
    const { root, llm, create } = await boot((request) => {
      if (taskOf(request) !== 'go') return scripted(request)
      return top_(request.messages.filter((message) => message.role === 'assistant').length)
    })
    const ready = gateTool(root)
    const top = await create({ maxCost: 250 })
    const turn = top.send('go')
    await ready
    const mid = root.agents.list().find((agent) => agent.parent?.sessionId === top.session.id)!
    midId = mid.session.id
    await mid.interrupt()
    await turn
    expect(llm.requests.filter((request) => taskOf(request) === 'dig')).toHaveLength(2)
  })
})

describe('concurrency safety', () => {
  it('is concurrency-safe only when the child\'s tools cannot write or run commands', async () => {
    const { root } = await boot(byTask({}), { subagents: { profiles: { reader: { tools: ['lookup'] }, writer: { tools: ['lookup', 'save'] } } } })
    const safe = (args: Record<string, unknown>) => root.tools.isConcurrencySafe('subagent', JSON.stringify(ask('x', args)))
    expect(safe({ tools: ['lookup'] })).toBe(true)
    expect(safe({ agent: 'reader' })).toBe(true)
    expect(safe({ agent: 'writer', tools: ['lookup'] })).toBe(true)
    expect(safe({ agent: 'writer' })).toBe(false)
    expect(safe({ tools: ['*'] })).toBe(false)
    // No narrowing: the child may get every tool, `save` among them.
    expect(safe({})).toBe(false)
    expect(safe({ agent: 'nobody' })).toBe(false)
  })

  it('runs two read-only subagents of one answer side by side', async () => {
    let inside = 0
    let peak = 0
    let release!: () => void
    const both = new Promise<void>((resolve) => { release = resolve })
    const { root, create } = await boot(byTask({
      'go': [[call('subagent', ask('a', { tools: ['meet'] }), 'c1'), call('subagent', ask('b', { tools: ['meet'] }), 'c2')], [{ text: 'ok' }]],
      'a': [[call('meet', {}, 'm1')], [{ text: 'A' }]],
      'b': [[call('meet', {}, 'm2')], [{ text: 'B' }]],
    }))
    root.tools.register(defineTool({
      name: 'meet',
      description: 'Waits for the other.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      effects: ['read'],
      isConcurrencySafe: true,
      execute: async () => {
        peak = Math.max(peak, ++inside)
        if (inside === 2) release()
        await both
        inside--
        return 'met'
      },
    }))
    const parent = await create()
    await parent.send('go')
    expect(peak).toBe(2)
    expect(textOf(resultOf(parent.session.events, 'c1'))).toMatch(/^A\n/)
    expect(textOf(resultOf(parent.session.events, 'c2'))).toMatch(/^B\n/)
  })

  it('makes parallel children share the steps their parent\'s turn has left, not get them each', async () => {
    const lookups = (task: string) => [0, 1, 2, 3].map((n) => [call('lookup', { word: `${task}${n}` }, `${task}${n}`)])
    const { llm, create } = await boot(byTask({
      'go': [[call('subagent', ask('a', { tools: ['lookup'] }), 'c1'), call('subagent', ask('b', { tools: ['lookup'] }), 'c2')], [{ text: 'ok' }]],
      'a': [...lookups('a'), [{ text: 'A' }]],
      'b': [...lookups('b'), [{ text: 'B' }]],
    }), { subagents: { profiles: {} } })
    const parent = await create({ maxSteps: 5 })
    await parent.send('go')
    // After its first request the parent had 4 left: the children's requests together stay within them.
    const childRequests = llm.requests.filter((request) => taskOf(request) === 'a' || taskOf(request) === 'b')
    expect(childRequests.length).toBeLessThanOrEqual(4)
    expect([resultOf(parent.session.events, 'c1')!.code, resultOf(parent.session.events, 'c2')!.code]).toContain('SUBAGENT_FAILED')
  })
})

describe('recover', () => {
  it('returns a completed child\'s answer without a new request, and TOOL_NOT_STARTED for a call with no child', async () => {
    const { root, llm, create } = await boot(byTask({
      'go': [[call('subagent', ask('find'), 'c1')], [{ text: 'ok' }]],
      'find': [[{ text: 'found it' }]],
    }))
    const parent = await create()
    await parent.send('go')
    const requests = llm.requests.length
    const recover = (callId: string) => root.tools.recover({ callId, name: 'subagent', arguments: JSON.stringify(ask('find')), signal: new AbortController().signal, context: { sessionId: parent.session.id } })
    const recovered = await recover('c1')
    expect(recovered).toMatchObject({ isError: false, value: { answer: 'found it', reason: 'completed' } })
    expect(llm.requests.length).toBe(requests)
    // No child stored for the call: it never started.
    expect(await recover('c9')).toMatchObject({ isError: true, error: { code: 'TOOL_NOT_STARTED' } })
  })
})

describe('recover, a child with subagents of its own', () => {
  it('reads the spend of the subagents the child started for the call into its usage and cost, as the live call has them', async () => {
    const { root, create } = await boot(byTask({
      'go': [[call('subagent', ask('work'), 'c1')], [{ text: 'ok' }]],
      'work': [[call('subagent', ask('deeper'), 'g1'), usage(100, 5)], [call('subagent', ask('deepest', { run_in_background: false }), 'g2'), usage(1, 1)], [{ text: 'worked' }, usage(1, 1)]],
      'deeper': [[{ text: 'deep' }, usage(1000, 50)]],
      'deepest': [[call('subagent', ask('bottom'), 'b1'), usage(7, 3)], [{ text: 'deepest' }, usage(2, 1)]],
      'bottom': [[{ text: 'bottom' }, usage(10_000, 500)]],
    }), { subagents: { maxDepth: 3 } })
    const parent = await create()
    await parent.send('go')
    const live = textOf(resultOf(parent.session.events, 'c1'))
    // The tree under c1, in and out: 102 and 7 (work), 1000 and 50 (deeper), 9 and 4 (deepest), 10 000 and 500 (bottom).
    expect(live).toMatch(/cost 12233\.0000\)$/)
    const recovered = await root.tools.recover({ callId: 'c1', name: 'subagent', arguments: JSON.stringify(ask('work')), signal: new AbortController().signal, context: { sessionId: parent.session.id } })
    expect(recovered).toMatchObject({ isError: false, value: { reason: 'completed', usage: { inputTokens: 11_111, outputTokens: 561 }, cost: 12_233 } })
  })
})

describe('cost', () => {
  it('reports the child\'s cost and rolls it into the parent\'s run exactly once', async () => {
    const { root, create } = await boot(byTask({
      'go': [[call('subagent', ask('work'), 'c1'), usage(10, 1)], [{ text: 'ok' }, usage(20, 2)]],
      'work': [[{ text: 'worked' }, usage(100, 5)]],
    }), { telemetry: true })
    const parent = await create()
    const turn = await parent.send('go')
    const report = root.telemetry.cost(turn.runId)!
    expect(report.own.money).toBeCloseTo(10 + 2 + 20 + 4)
    expect(report.children.money).toBeCloseTo(110)
    expect(report.total.money).toBeCloseTo(146)
    const result = resultOf(parent.session.events, 'c1')!
    // The model reads the child's cost beside its answer and session.
    expect(textOf(result)).toMatch(/^worked\n\(subagent session \S+, cost 110\.0000\)$/)
  })

  it('hides a subagent\'s tokens from a parent turn without telemetry when its result does not carry the tree\'s spend', async () => {
    const { create } = await boot(byTask({
      'go': [[call('subagent', ask('work'), 'c1'), usage(10, 1)], [{ text: 'ok' }, usage(20, 2)]],
      'work': [[call('subagent', ask('deeper'), 'g1'), usage(100, 5)], [{ text: 'worked' }, usage(1, 1)]],
      'deeper': [[{ text: 'deep' }, usage(1000, 50)]],
    }))
    const parent = await create()
    const turn = await parent.send('go')
    expect(turn.usage).toEqual({ inputTokens: 30, outputTokens: 3 })
    // The child and its own child, each once.
    expect(turn.subagents).toEqual({ usage: { inputTokens: 1101, outputTokens: 56 }, cost: 1101 + 2 * 56 })
    // The call's result names the child's cost with its own child's: 113 + 1100.
    expect(textOf(resultOf(parent.session.events, 'c1'))).toContain('cost 1213.0000')
  })
})

describe('the plugin', () => {
  it('takes the tool with it when disposed', async () => {
    const { root, fiber } = await boot(byTask({}))
    expect(root.tools.list()).toContain('subagent')
    await fiber.dispose()
    expect(root.tools.list()).not.toContain('subagent')
    expect(root.get('subagents')).toBeUndefined()
  })

  it('fails the load on a malformed tool pattern in a profile', async () => {
    await expect(boot(byTask({}), { subagents: { profiles: { bad: { tools: ['!'] } } } })).rejects.toThrow(/profiles\.bad\.tools/)
  })
})
