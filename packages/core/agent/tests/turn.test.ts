import { readFile, stat } from 'node:fs/promises'
import { deriveMessages } from '@rein/session'
import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../src/index.ts'
import { boot, expectValidLog, probeTools, types } from './fixtures.ts'

describe('a turn', () => {
  it('answers in one step and logs it in order', async () => {
    const { root, llm } = await boot([[{ text: 'Hello!' }, { usage: { inputTokens: 10, outputTokens: 2 } }]])
    const agent = await root.agents.create({ system: 'Be kind.', cwd: '/work' })
    const events: AgentEvent[] = []
    agent.subscribe((event) => events.push(event))
    const result = await agent.send('hi')
    expect(result).toEqual({ turn: 1, runId: expect.stringMatching(/^run_/), reason: 'completed', usage: { inputTokens: 10, outputTokens: 2 }, text: 'Hello!' })
    expect(types(agent.session.events)).toEqual(['turn/start', 'user/message', 'step/start', 'request/header', 'llm/attempt', 'assistant/message', 'step/end', 'turn/end'])
    expect(agent.session.pending).toBe(0)
    expect(events.map((event) => event.type)).toEqual(['turn-start', 'context', 'text-delta', 'attempt', 'usage', 'turn-end'])
    expect(llm.requests[0]).toMatchObject({ provider: 'scripted', model: 'm', system: 'Be kind.' })
    expect(agent.usage).toEqual({ inputTokens: 10, outputTokens: 2 })
    expectValidLog(agent.session.events)
  })

  it('marks the usage event estimated when the provider reported no usage, as the result is', async () => {
    const { root } = await boot([[{ text: 'No counts from this provider.' }]])
    const agent = await root.agents.create()
    const events: AgentEvent[] = []
    agent.subscribe((event) => events.push(event))
    const result = await agent.send('hi')
    expect(result.usageEstimated).toBe(true)
    expect(events.find((event) => event.type === 'usage')).toMatchObject({ estimated: true })
  })

  it('runs the tools the model asks for, then asks again with their results', async () => {
    const { root, llm } = await boot([
      [{ text: 'Reading.' }, { toolCall: { id: 'c1', name: 'slow_read', arguments: '{"key":"a"}' } }, { toolCall: { id: 'c2', name: 'write', arguments: '{"text":"x"}' } }],
      [{ text: 'Done.' }],
    ])
    const probe = probeTools(root)
    const agent = await root.agents.create()
    const result = await agent.send('do it')
    expect(result.reason).toBe('completed')
    expect(probe.log).toEqual(['start a', 'end a', 'write x'])
    expect(types(agent.session.events)).toEqual([
      'turn/start', 'user/message',
      'step/start', 'request/header', 'llm/attempt', 'assistant/message', 'tool/call', 'tool/result', 'tool/call', 'tool/result', 'step/end',
      'step/start', 'llm/attempt', 'assistant/message', 'step/end',
      'turn/end',
    ])
    expect(agent.session.events.find((event) => event.type === 'tool/call')?.data).toEqual({ callId: 'c1', name: 'slow_read', arguments: '{"key":"a"}', replaySafe: true })
    expect(llm.requests[1]!.messages.at(-1)).toMatchObject({ role: 'user', content: [
      { type: 'tool-result', toolCallId: 'c1', content: [{ type: 'text', text: 'read a' }] },
      { type: 'tool-result', toolCallId: 'c2', content: [{ type: 'text', text: 'wrote x' }] },
    ] })
    expectValidLog(agent.session.events)
  })

  it('builds every request from the log alone, and each extends the previous one', async () => {
    const { root, llm } = await boot([
      [{ toolCall: { id: 'c1', name: 'slow_read', arguments: '{"key":"a"}' } }],
      [{ toolCall: { id: 'c2', name: 'slow_read', arguments: '{"key":"b"}' } }],
      [{ text: 'ok' }],
    ])
    probeTools(root)
    const agent = await root.agents.create({ system: 'S' })
    await agent.send('go')
    const events = agent.session.events
    const requestSeqs = events.filter((event) => event.type === 'step/start').map((event) => event.seq)
    requestSeqs.forEach((seq, i) => {
      // The request carried exactly what the log held before the model's answer to it.
      const answer = events.find((event) => event.seq > seq && event.type === 'assistant/message')!.seq
      const before = events.filter((event) => event.seq < answer)
      expect(JSON.stringify(llm.requests[i]!.messages)).toBe(JSON.stringify(deriveMessages(before)))
    })
    for (let i = 1; i < llm.requests.length; i++) {
      const previous = JSON.stringify(llm.requests[i - 1]!.messages)
      expect(JSON.stringify(llm.requests[i]!.messages).startsWith(previous.slice(0, -1))).toBe(true)
    }
    expect(llm.requests.map((request) => request.system)).toEqual(['S', 'S', 'S'])
    expect(types(events).filter((type) => type === 'request/header')).toHaveLength(1)
  })

  it('runs consecutive safe calls together, treats any other call as a barrier, and commits in model order', async () => {
    const { root } = await boot([
      [
        { toolCall: { id: 'c1', name: 'slow_read', arguments: '{"key":"gate1"}' } },
        { toolCall: { id: 'c2', name: 'slow_read', arguments: '{"key":"b"}' } },
        { toolCall: { id: 'c3', name: 'write', arguments: '{"text":"w"}' } },
        { toolCall: { id: 'c4', name: 'slow_read', arguments: '{"key":"d"}' } },
      ],
      [{ text: 'ok' }],
    ])
    const probe = probeTools(root)
    const agent = await root.agents.create()
    const running = agent.send('go')
    await expect.poll(() => probe.log).toEqual(['start gate1', 'start b', 'end b'])
    probe.open('gate1')
    await running
    expect(probe.log).toEqual(['start gate1', 'start b', 'end b', 'end gate1', 'write w', 'start d', 'end d'])
    expect(probe.peak()).toBe(2)
    const results = agent.session.events.filter((event) => event.type === 'tool/result').map((event) => (event.data as { callId: string }).callId)
    expect(results).toEqual(['c1', 'c2', 'c3', 'c4'])
    const order = agent.session.events.filter((event) => event.type.startsWith('tool/')).map((event) => `${event.type === 'tool/call' ? 'call' : 'result'} ${(event.data as { callId: string }).callId}`)
    expect(order).toEqual(['call c1', 'call c2', 'result c1', 'result c2', 'call c3', 'result c3', 'call c4', 'result c4'])
    expectValidLog(agent.session.events)
  })

  it('bounds the pool by maxParallelToolCalls', async () => {
    const calls = Array.from({ length: 5 }, (_, i) => ({ toolCall: { id: `c${i}`, name: 'slow_read', arguments: `{"key":"k${i}"}` } }))
    const { root } = await boot([calls, [{ text: 'ok' }]], { agent: { maxParallelToolCalls: 2 } })
    const probe = probeTools(root)
    const agent = await root.agents.create()
    await agent.send('go')
    expect(probe.peak()).toBeLessThanOrEqual(2)
    expect(probe.log.filter((line) => line.startsWith('end'))).toHaveLength(5)
  })

  it('pairs a call to an unknown tool or with bad arguments with an error the model sees', async () => {
    const { root, llm } = await boot([
      [{ toolCall: { id: 'c1', name: 'nope', arguments: '{}' } }, { toolCall: { id: 'c2', name: 'write', arguments: '{"text":' } }],
      [{ text: 'sorry' }],
    ])
    probeTools(root)
    const agent = await root.agents.create()
    expect((await agent.send('go')).reason).toBe('completed')
    const results = llm.requests[1]!.messages.at(-1)!.content
    expect(results).toMatchObject([
      { toolCallId: 'c1', isError: true, content: [{ text: expect.stringMatching(/^Error: unknown tool "nope"/) }] },
      { toolCallId: 'c2', isError: true, content: [{ text: expect.stringMatching(/^Error: invalid arguments for write/) }] },
    ])
    expectValidLog(agent.session.events)
  })

  it('spills a long result to the session folder and shows the model its head, tail and path', async () => {
    const { root, llm } = await boot([[{ toolCall: { id: 'c1', name: 'big', arguments: '{}' } }], [{ text: 'ok' }]], { agent: { spillAfterChars: 500 } })
    const { defineTool } = await import('@rein/tools')
    const output = Array.from({ length: 500 }, (_, line) => `line ${line}`).join('\n')
    root.tools.register(defineTool({ name: 'big', description: 'Big output.', parameters: {}, output: { schema: { type: 'string' }, render: (_a, v) => v }, execute: () => output }))
    const agent = await root.agents.create()
    await agent.send('go')
    const result = agent.session.events.find((event) => event.type === 'tool/result')!.data as { content: { text: string }[]; spill: { path: string; chars: number; lines: number } }
    expect(result.spill).toMatchObject({ chars: output.length, lines: 500 })
    expect(await readFile(result.spill.path, 'utf8')).toBe(output)
    expect((await stat(result.spill.path)).mode & 0o777).toBe(0o600)
    const seen = llm.requests[1]!.messages.at(-1)!.content[0]
    const text = seen?.type === 'tool-result' && seen.content[0]?.type === 'text' ? seen.content[0].text : ''
    expect(text).toBe(result.content[0]!.text)
    expect(text.startsWith('line 0\nline 1\n')).toBe(true)
    expect(text.endsWith('line 498\nline 499')).toBe(true)
    expect(text).toContain(`is saved at ${result.spill.path}`)
    expect(text.length).toBeLessThan(1_000)
  })

  it('keeps a result of spillAfterLines lines that end in a newline whole: the final newline is no extra line', async () => {
    const { root } = await boot([[{ toolCall: { id: 'c1', name: 'ten', arguments: '{}' } }], [{ text: 'ok' }]], { agent: { spillAfterLines: 10 } })
    const { defineTool } = await import('@rein/tools')
    const output = Array.from({ length: 10 }, (_, line) => `line ${line}\n`).join('')
    root.tools.register(defineTool({ name: 'ten', description: 'Ten lines.', parameters: {}, output: { schema: { type: 'string' }, render: (_a, v) => v }, execute: () => output }))
    const agent = await root.agents.create()
    await agent.send('go')
    const result = agent.session.events.find((event) => event.type === 'tool/result')!.data as { content: { text: string }[]; spill?: unknown }
    expect({ spill: result.spill, text: result.content[0]!.text }).toEqual({ spill: undefined, text: output })
  })

  it('logs retries and fallbacks, and records the route that answered', async () => {
    const failing = { fail: { code: 'SERVER' as const, message: 'boom' } }
    const { root } = await boot([[failing], [failing], [failing]], { agent: { fallbacks: [{ provider: 'backup', model: 'b' }] } })
    const { createScriptedLlm } = await import('@rein/testkit')
    root.llm.registerAdapter('backup', createScriptedLlm([[{ text: 'from backup' }]]))
    const agent = await root.agents.create()
    const result = await agent.send('go')
    expect(result).toMatchObject({ reason: 'completed', text: 'from backup' })
    expect(types(agent.session.events).filter((type) => type.startsWith('llm/'))).toEqual([
      'llm/attempt', 'llm/retry', 'llm/resend', 'llm/attempt', 'llm/retry', 'llm/resend', 'llm/attempt', 'llm/resend', 'llm/fallback', 'llm/attempt',
    ])
    expect(agent.session.events.find((event) => event.type === 'assistant/message')!.data).toMatchObject({ provider: 'backup', model: 'b' })
    expectValidLog(agent.session.events)
  })

  it('refuses a message that is not a string before writing anything, so no turn is left open and the next turn is a turn of its own', async () => {
    const { root } = await boot([[{ text: 'ok' }]])
    const agent = await root.agents.create()
    for (const bad of [{ text: 'hi' }, 42, undefined, null, ['hi']]) {
      await expect(agent.send(bad as unknown as string)).rejects.toMatchObject({ code: 'INVALID_MESSAGE', message: expect.stringContaining('send takes the message as a string') })
    }
    expect(agent.session.events).toEqual([])
    expect((await agent.send('hi')).reason).toBe('completed')
    expect(types(agent.session.events).filter((type) => type === 'turn/start')).toHaveLength(1)
    expectValidLog(agent.session.events)
  })

  it('holds create and resume options to the row\'s schema, so no option can lift a limit (maxSteps NaN ran until the model stopped)', async () => {
    const { root } = await boot([[{ text: 'ok' }]])
    const bad: Record<string, unknown>[] = [
      { maxSteps: Number.NaN }, { maxSteps: 0 }, { maxSteps: -1 }, { maxSteps: 'abc' }, { maxSteps: 1.5 },
      { maxOutputTokens: -5 }, { maxCost: Number.NaN }, { maxCost: -1 }, { temperature: 7 }, { temperature: Number.NaN },
      { maxParallelToolCalls: 0 }, { compaction: { threshold: 2 } },
      // JSON's NaN, and what the schema would take for absent.
      { maxSteps: null }, { maxParallelToolCalls: null }, { compaction: null }, { fallbacks: null }, { temperature: null }, { compaction: { threshold: null } },
    ]
    for (const options of bad) {
      const [key] = Object.keys(options)
      await expect(root.agents.create(options)).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringContaining(`option ${key}`) })
    }
    const agent = await root.agents.create({ maxSteps: 3, temperature: 0.5 })
    expect((await agent.send('hi')).reason).toBe('completed')
    await agent.close()
    await expect(root.agents.resume(agent.session.id, { maxSteps: Number.NaN })).rejects.toMatchObject({ code: 'CONFIG_INVALID' })
  })

  it('resumes a session whose log recorded an option the schema now refuses: only what the caller gives is checked', async () => {
    const { root } = await boot([[{ text: 'one' }], [{ text: 'two' }]])
    const agent = await root.agents.create()
    // As an older rein accepted it (a local server takes temperatures above 2).
    ;(agent.options as { temperature?: number }).temperature = 2.5
    expect((await agent.send('hi')).reason).toBe('completed')
    await agent.close()
    const { agent: resumed } = await root.agents.resume(agent.session.id)
    expect((await resumed.send('again')).reason).toBe('completed')
  })

  it('records an attempt whose adapter reported usage that is not usage (negative, reasoning above output), and the log keeps its invariants', async () => {
    const { root } = await boot([
      [{ text: 'one' }, { usage: { inputTokens: -5, outputTokens: 2 } }],
      [{ text: 'two' }, { usage: { inputTokens: 10, outputTokens: 2, reasoningTokens: 5 } }],
    ])
    const agent = await root.agents.create()
    const first = await agent.send('first')
    expect(first.error).toBeUndefined()
    expect(first.reason).toBe('completed')
    expect((await agent.send('second')).usage).toMatchObject({ inputTokens: 10, outputTokens: 7, reasoningTokens: 5 })
    const attempts = agent.session.events.filter((event) => event.type === 'llm/attempt')
    expect(attempts).toHaveLength(2)
    expect(attempts[0]!.data).toMatchObject({ usageEstimated: true })
    expectValidLog(agent.session.events)
  })

  it('refuses a second turn while one runs', async () => {
    const { root } = await boot([[{ toolCall: { id: 'c1', name: 'slow_read', arguments: '{"key":"gate"}' } }], [{ text: 'ok' }]])
    const probe = probeTools(root)
    const agent = await root.agents.create()
    const first = agent.send('one')
    await expect.poll(() => probe.log).toEqual(['start gate'])
    await expect(agent.send('two')).rejects.toMatchObject({ code: 'AGENT_BUSY' })
    probe.open('gate')
    await first
    expect(agent.status).toBe('idle')
  })
})
