// `resume`: continuing one of the caller's earlier subagents in its own session, and the
// profile check once the composition has loaded.
import type { AdapterRequest } from '@rein/llm'
import { eventData, spending } from '@rein/session'
import type { ScriptedTurn } from '@rein/testkit'
import { describe, expect, it } from 'vitest'
import { boot, call, childIdOf, resultOf, taskOf, textOf, usage } from './harness.ts'

const answers = (request: AdapterRequest) => request.messages.filter((message) => message.role === 'assistant').length

/** The child session id the request's last subagent result names. */
function childIn(request: AdapterRequest): string {
  const text = request.messages.flatMap((message) => message.content).map((block) => (block.type === 'tool-result' ? JSON.stringify(block) : '')).join('')
  const ids = [...text.matchAll(/subagent session ([^\s,;)\\]+)/g)].map((match) => match[1]!)
  return ids.at(-1) ?? 'none'
}

/** The parent delegates `dig` (only `lookup`), then makes `second(childId)` its next call, then answers. */
function script(second: (childId: string) => Record<string, unknown>, child: readonly ScriptedTurn[], first: Record<string, unknown> = {}) {
  return (request: AdapterRequest): ScriptedTurn => {
    const task = taskOf(request)
    if (task === 'go') {
      const steps: ScriptedTurn[] = [
        [call('subagent', { description: 'dig', prompt: 'dig', tools: ['lookup'], ...first }, 'c1')],
        [call('subagent', { description: 'more', ...second(childIn(request)) }, 'c2')],
        [{ text: 'done' }],
      ]
      return steps[answers(request)]!
    }
    if (task === 'dig') return child[answers(request)]!
    throw new Error(`no script for ${task}`)
  }
}

describe('resume', () => {
  it('continues a finished subagent with a follow-up: its history kept, its tools never widened', async () => {
    const { root, llm, create } = await boot(script((id) => ({ prompt: 'and y?', resume: id }), [[{ text: 'x found' }], [{ text: 'y found too' }]]))
    const parent = await create()
    await parent.send('go')
    const first = textOf(resultOf(parent.session.events, 'c1'))
    const id = childIdOf(first)
    expect(textOf(resultOf(parent.session.events, 'c2'))).toMatch(new RegExp(`^y found too\\n\\(subagent session ${id}, cost [0-9.]+\\)$`))
    const child = await root.sessions.load(id)
    expect(child.events.filter((event) => event.type === 'turn/start')).toHaveLength(2)
    const requests = llm.requests.filter((request) => taskOf(request) === 'dig')
    expect(requests[1]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
    // Resumed without `tools`, it still has only what it was given: lookup.
    expect(requests.map((request) => request.tools?.map((tool) => tool.name))).toEqual([['lookup'], ['lookup']])
    expect(root.agents.list()).toEqual([parent])
  })

  it('continues a subagent that failed, with what it had, and recover finds the resumed call by the turn it started', async () => {
    const { root, create } = await boot(script((id) => ({ prompt: 'go on', resume: id }), [
      [call('lookup', { word: 'a' }, 'k1')], [call('lookup', { word: 'b' }, 'k2')], [{ text: 'finished after b' }],
    ], { agent: 'short' }), { subagents: { profiles: { short: { maxSteps: 1 } } } })
    const parent = await create()
    await parent.send('go')
    // The first call ran out of steps after one lookup: its error names the session to resume.
    expect(resultOf(parent.session.events, 'c1')).toMatchObject({ isError: true, code: 'SUBAGENT_FAILED' })
    const result = resultOf(parent.session.events, 'c2')!
    expect(result.isError).toBe(false)
    expect(textOf(result)).toContain('finished after b')
    const id = childIdOf(textOf(result))
    const recover = (callId: string) => root.tools.recover({ callId, name: 'subagent', arguments: JSON.stringify({ description: 'more', prompt: 'go on', resume: id }), signal: new AbortController().signal, context: { sessionId: parent.session.id } })
    const recovered = await recover('c2')
    expect(recovered).toMatchObject({ isError: false, value: { sessionId: id, answer: 'finished after b' } })
    // Its usage is this call's turn, not the child's whole log (c1's turn is in it too).
    const { events } = await root.sessions.load(id)
    const turnOfC2 = events.findIndex((event) => event.type === 'turn/start' && eventData(event, 'turn/start').parentCallId === 'c2')
    expect(spending(events.slice(turnOfC2)).usage).not.toEqual(spending(events).usage)
    expect(recovered && 'value' in recovered ? (recovered.value as { usage?: unknown }).usage : undefined).toEqual(spending(events.slice(turnOfC2)).usage)
    // A call whose turn never started in the child (the crash came first): it did nothing.
    expect(await recover('c9')).toMatchObject({ isError: true, error: { code: 'TOOL_NOT_STARTED' } })
  })

  it.each([
    ['an id no session has', () => 'no-such-session', 'INVALID_ARGS', /no subagent session "no-such-session"/],
    ['a session that is not one of the caller\'s subagents', (other: string) => other, 'INVALID_ARGS', /is not one of your subagents/],
  ])('refuses %s, starting nothing', async (_name, target, code, message) => {
    let other = ''
    const { root, llm, create } = await boot(script(() => ({ prompt: 'hi', resume: target(other) }), [[{ text: 'x found' }]]))
    other = (await create()).session.id
    const parent = await create()
    await parent.send('go')
    const result = resultOf(parent.session.events, 'c2')!
    expect(textOf(result)).toMatch(message)
    expect(result).toMatchObject({ isError: true, code })
    expect(llm.requests.filter((request) => taskOf(request) === 'hi')).toEqual([])
    expect((await root.sessions.list()).filter((summary) => summary.parentCallId === 'c2')).toEqual([])
  })
})

describe('a child session resumed outside a subagent call', () => {
  const profiles = { narrow: { description: 'looks words up', system: 'NARROW-SYSTEM', tools: ['lookup'], maxSteps: 2 } }
  const childScript = (request: AdapterRequest): ScriptedTurn => {
    if (taskOf(request) === 'go') return answers(request) === 0 ? [call('subagent', { description: 'dig', prompt: 'dig', agent: 'narrow' }, 'c1')] : [{ text: 'done' }]
    return [{ text: `child answer ${answers(request)}` }]
  }

  it('goes on as its profile made it when ctx.agents.resume is given no options (an embedder\'s resume)', async () => {
    const { root, llm, create } = await boot(childScript, { subagents: { profiles } })
    const parent = await create()
    await parent.send('go')
    const id = childIdOf(textOf(resultOf(parent.session.events, 'c1')))
    const { agent } = await root.agents.resume(id)
    try {
      expect(agent.options).toMatchObject({ system: 'NARROW-SYSTEM', maxSteps: 2 })
      await agent.send('follow up')
    } finally {
      await agent.close()
    }
    const last = llm.requests.at(-1)!
    expect(last.system).toContain('NARROW-SYSTEM')
    expect(last.tools?.map((tool) => tool.name)).toEqual(['lookup'])
  })

  it('is resumed with the agents row\'s options, its recorded tools kept, once @rein/subagents is gone', async () => {
    const { root, fiber, create } = await boot(childScript, { subagents: { profiles } })
    const parent = await create()
    await parent.send('go')
    const id = childIdOf(textOf(resultOf(parent.session.events, 'c1')))
    await parent.close()
    await fiber.dispose()
    const { agent } = await root.agents.resume(id)
    try {
      expect(agent.options.system).not.toBe('NARROW-SYSTEM')
      expect(agent.options.tools).toEqual(['lookup'])
    } finally {
      await agent.close()
    }
  })
})

describe('a resumed child works for the call that resumed it', () => {
  it('charges its spend to the resuming turn and records that run and call in its new turn', async () => {
    const { root, create } = await boot((request: AdapterRequest): ScriptedTurn => {
      const task = taskOf(request)
      const n = answers(request)
      if (task === 'go') {
        return [
          [call('subagent', { description: 'dig', prompt: 'dig' }, 'c1')],
          [{ text: 'first done' }],
          [call('subagent', { description: 'more', prompt: 'and y?', resume: childIn(request) }, 'c2')],
          [{ text: 'second done' }],
        ][n]!
      }
      return [[{ text: 'x' }, usage(100, 0)], [{ text: 'y' }, usage(1000, 0)]][n]!
    }, { telemetry: true })
    const parent = await create()
    const first = await parent.send('go')
    const second = await parent.send('again')
    expect(first.subagents?.usage.inputTokens).toBe(100)
    expect(second.subagents?.usage.inputTokens).toBe(1000)
    expect(root.telemetry.cost(first.runId)!.children.usage.inputTokens).toBe(100)
    expect(root.telemetry.cost(second.runId)!.children.usage.inputTokens).toBe(1000)
    const id = childIdOf(textOf(resultOf(parent.session.events, 'c2')))
    const starts = (await root.sessions.load(id)).events.filter((event) => event.type === 'turn/start').map((event) => event.data)
    expect(starts).toMatchObject([{ parentRunId: first.runId, parentCallId: 'c1' }, { parentRunId: second.runId, parentCallId: 'c2' }])
  })
})

describe('profiles checked once the composition has loaded', () => {
  it('names each profile whose tool, provider or model no row provides', async () => {
    const { root } = await boot(script(() => ({}), []), { subagents: { profiles: {
      typo: { tools: ['lookup', 'grpe', 'sa*'] },
      elsewhere: { provider: 'nowhere', model: 'm' },
      renamed: { provider: 'scripted', model: 'm-2' },
      fine: { provider: 'scripted', model: 'm', tools: ['lookup'] },
    } } })
    const problems: string[] = []
    await root.parallel('compose/check', problems)
    expect(problems).toEqual([
      '@rein/subagents: profiles.typo.tools names no such tool: grpe (registered: lookup, recall_result, save, subagent)',
      '@rein/subagents: profiles.elsewhere.provider "nowhere" is served by no loaded provider (loaded: scripted)',
      '@rein/subagents: profiles.renamed.model "m-2" is not in scripted\'s model catalog (it has: m)',
    ])
  })
})
