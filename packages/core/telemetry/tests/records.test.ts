// Records from the agent's lifecycle events: kinds, phases, scope, order, content behind content().
import type { Context } from '@deepseek-ai/cordis'
import { hasListeners } from '@rein/base'
import type { StreamChunk } from '@rein/llm'
import { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import type { LlmCallEndRecord, LlmCallStartRecord, RunEndRecord, RunScope, ToolCallEndRecord, ToolCallStartRecord } from '../src/index.ts'
import { boot, call, recorder, runIdOf, usage } from './harness.ts'

const ALWAYS = ['agent/turn-start', 'agent/turn-end', 'agent/llm-end'] as const
const WITH_SINKS = ['agent/step-start', 'agent/step-end', 'agent/llm-start', 'agent/tool-start', 'agent/tool-end'] as const

function echoTool(root: Context) {
  root.tools.register(defineTool({
    name: 'echo',
    description: 'Echoes.',
    parameters: { text: { type: 'string', required: true } },
    effects: ['read'],
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: (args) => `echo ${args.text}`,
  }))
}

const TWO_STEPS = [
  [call('echo', { text: 'ARGUMENT-MARKER' }, 'c1'), usage(10, 2)],
  [{ text: 'ANSWER-MARKER' }, usage(20, 1)],
]

describe('records', () => {
  it('records a run of two steps and a tool call: kinds, phases, scope and order', async () => {
    const { root, create } = await boot(TWO_STEPS)
    echoTool(root)
    const sink = recorder()
    root.telemetry.sink(sink)
    const agent = await create()
    expect(await agent.send('go')).toMatchObject({ reason: 'completed', text: 'ANSWER-MARKER' })
    const { records } = sink
    expect(records.map((record) => `${record.kind}/${record.phase}${'step' in record ? ` ${record.step}` : ''}`)).toEqual([
      'run/start',
      'step/start 1', 'llm_call/start 1', 'llm_call/end 1', 'tool_call/start 1', 'tool_call/end 1', 'step/end 1',
      'step/start 2', 'llm_call/start 2', 'llm_call/end 2', 'step/end 2',
      'run/end',
    ])
    const sessionId = agent.session.id
    const scope: RunScope = { runId: runIdOf(agent), turnId: `${sessionId}/1`, sessionId, conversationId: sessionId, agentName: 'main', depth: 0 }
    for (const record of records) expect(record.scope).toEqual(scope)
    const [llmStart, llmEnd] = [records[2] as LlmCallStartRecord, records[3] as LlmCallEndRecord]
    expect(llmStart).toMatchObject({ route: 'scripted', providerName: 'scripted', requestModel: 'm', retry: 0, fallback: 0 })
    expect(llmEnd).toMatchObject({ route: 'scripted', requestModel: 'm', finishReason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 2 }, cost: 14 })
    expect(llmEnd.endedAt).toBeGreaterThanOrEqual(llmEnd.startedAt)
    expect(llmEnd.errorCode).toBeUndefined()
    expect(records[5]).toMatchObject({ toolName: 'echo', callId: 'c1', effects: ['read'], isError: false, step: 1 })
    const end = records[11] as RunEndRecord
    expect(end).toMatchObject({ reason: 'completed' })
    expect(end.errorCode).toBeUndefined()
    expect(end.cost).toEqual({
      own: { usage: { inputTokens: 30, outputTokens: 3 }, money: 36, unpriced: false, estimated: false, attempts: 2 },
      children: { usage: { inputTokens: 0, outputTokens: 0 }, unpriced: false, estimated: false, attempts: 0 },
      total: { usage: { inputTokens: 30, outputTokens: 3 }, money: 36, unpriced: false, estimated: false, attempts: 2 },
    })
    expect(Object.isFrozen(records[3])).toBe(true)
  })

  it('gives content only through content(), as the model was asked and answered', async () => {
    const { root, llm, create } = await boot(TWO_STEPS)
    echoTool(root)
    const sink = recorder()
    root.telemetry.sink(sink)
    const agent = await create({ system: 'SYSTEM-MARKER' })
    await agent.send('PROMPT-MARKER')
    // What a sink that never calls content() holds: not one byte of content.
    const plain = JSON.stringify(sink.records)
    for (const marker of ['SYSTEM-MARKER', 'PROMPT-MARKER', 'ARGUMENT-MARKER', 'ANSWER-MARKER']) expect(plain).not.toContain(marker)
    const llmCalls = sink.records.filter((record): record is LlmCallStartRecord | LlmCallEndRecord => record.kind === 'llm_call')
    for (const record of llmCalls) {
      const content = record.content!()
      const request = llm.requests[record.step - 1]!
      expect(content.system).toContain('SYSTEM-MARKER')
      expect(content.system).toBe(request.system)
      expect(content.messages).toEqual(request.messages)
      expect((content.tools as { name: string }[]).map((tool) => tool.name)).toEqual(['echo'])
    }
    const ends = llmCalls.filter((record): record is LlmCallEndRecord => record.phase === 'end')
    expect(ends[0]!.content!().output).toEqual([{ type: 'tool-call', id: 'c1', name: 'echo', arguments: '{"text":"ARGUMENT-MARKER"}' }])
    expect(ends[1]!.content!().output).toEqual([{ type: 'text', text: 'ANSWER-MARKER' }])
    const tools = sink.records.filter((record): record is ToolCallStartRecord | ToolCallEndRecord => record.kind === 'tool_call')
    expect(tools[0]!.content!()).toEqual({ arguments: '{"text":"ARGUMENT-MARKER"}' })
    expect(tools[1]!.content!()).toEqual({ arguments: '{"text":"ARGUMENT-MARKER"}', result: 'echo ARGUMENT-MARKER' })
  })

  it('records a failed attempt with its error code and no output', async () => {
    const { root, create } = await boot([[{ fail: { code: 'AUTH', message: 'bad key' } }]])
    const sink = recorder()
    root.telemetry.sink(sink)
    await (await create()).send('go')
    const end = sink.records.find((record) => record.kind === 'llm_call' && record.phase === 'end') as LlmCallEndRecord
    expect(end).toMatchObject({ errorCode: 'AUTH' })
    expect(end.content!().output).toBeUndefined()
    expect(sink.records.at(-1)).toMatchObject({ kind: 'run', phase: 'end', reason: 'error', errorCode: 'AUTH' })
  })

  it('keeps apart the usage the provider reported from the estimate rein added after it', async () => {
    const { root, create } = await boot([])
    // The provider reports before the answer and never after: rein adds an estimate of the 40 characters.
    const text = 'x'.repeat(40)
    root.llm.registerAdapter('early', {
      async *stream() {
        yield* [
          { type: 'usage', usage: { inputTokens: 10, outputTokens: 0 } }, { type: 'block-start', index: 0, blockType: 'text' },
          { type: 'text-delta', index: 0, text }, { type: 'block-end', index: 0, block: { type: 'text', text } }, { type: 'finish', reason: 'stop' },
        ] satisfies StreamChunk[]
      },
    })
    const sink = recorder()
    root.telemetry.sink(sink)
    await (await create({ provider: 'early', model: 'm' })).send('go')
    const end = sink.records.find((record) => record.kind === 'llm_call' && record.phase === 'end') as LlmCallEndRecord
    expect(end).toMatchObject({ usage: { inputTokens: 10, outputTokens: 10 }, usageEstimated: true, reportedUsage: { inputTokens: 10, outputTokens: 0 } })
    expect(Object.isFrozen(end.reportedUsage)).toBe(true)
  })

  it('listens to steps, tools and attempt starts only while a sink is registered', async () => {
    const { root, create } = await boot([[usage(5, 1), { text: 'one' }], [usage(6, 1), { text: 'two' }]])
    for (const name of ALWAYS) expect(hasListeners(root, name)).toBe(true)
    for (const name of WITH_SINKS) expect(hasListeners(root, name)).toBe(false)
    const agent = await create()
    await agent.send('first')
    // No sink: still costed.
    expect(root.telemetry.cost(runIdOf(agent))?.own.usage).toEqual({ inputTokens: 5, outputTokens: 1 })
    const first = recorder('first')
    const second = recorder('second')
    const disposeFirst = root.telemetry.sink(first)
    const disposeSecond = root.telemetry.sink(second)
    for (const name of WITH_SINKS) expect(hasListeners(root, name)).toBe(true)
    await disposeFirst()
    for (const name of WITH_SINKS) expect(hasListeners(root, name)).toBe(true)
    await agent.send('second')
    expect(first.records).toEqual([])
    expect(second.records).toHaveLength(6)
    await disposeSecond()
    for (const name of WITH_SINKS) expect(hasListeners(root, name)).toBe(false)
    for (const name of ALWAYS) expect(hasListeners(root, name)).toBe(true)
  })

  it('refuses a sink without a name or an emit function, and the same sink twice', async () => {
    const { root } = await boot([])
    expect(() => root.telemetry.sink({ name: 'broken' } as never)).toThrow(expect.objectContaining({ code: 'INVALID_SINK' }))
    expect(() => root.telemetry.sink(null as never)).toThrow(expect.objectContaining({ code: 'INVALID_SINK' }))
    const sink = recorder()
    root.telemetry.sink(sink)
    expect(() => root.telemetry.sink(sink)).toThrow(expect.objectContaining({ code: 'DUPLICATE_SINK' }))
  })

  it('removes its listeners, sinks and tool wrapper when the plugin is disposed', async () => {
    const { root, telemetry, create } = await boot([[call('where', {}, 'c1')], [{ text: 'done' }], [call('where', {}, 'c2')], [{ text: 'done' }]])
    const service = root.telemetry
    const seen: unknown[] = []
    root.tools.register(defineTool({
      name: 'where', description: 'Says where.', parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: () => { seen.push(service.scope()); return 'here' },
    }))
    const sink = recorder()
    service.sink(sink)
    const before = await create()
    await before.send('go')
    expect(seen).toEqual([expect.objectContaining({ runId: runIdOf(before) })])
    expect(sink.records).toHaveLength(12)
    expect(service.cost(runIdOf(before))).toBeDefined()
    await telemetry.dispose()
    seen.length = 0
    sink.records.length = 0
    expect(root.get('telemetry')).toBeUndefined()
    for (const name of [...ALWAYS, ...WITH_SINKS]) expect(hasListeners(root, name)).toBe(false)
    const agent = await create()
    await agent.send('go')
    expect(sink.records).toEqual([])
    expect(seen).toEqual([undefined])
    expect(service.cost(runIdOf(agent))).toBeUndefined()
    expect(service.cost(runIdOf(before))).toBeUndefined()
  })
})
