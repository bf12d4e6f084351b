// A step whose stream failed after only reasoning is retried: listeners are told to drop that
// reasoning, the answer logged is the retry's, and each attempt's tokens count once.
import { addUsage } from '@rein/llm'
import { eventData } from '@rein/session'
import { describe, expect, it } from 'vitest'
import type { AgentEvent } from '../src/index.ts'
import { boot, expectValidLog, types } from './fixtures.ts'

const answered = { inputTokens: 20, outputTokens: 6, reasoningTokens: 2 }

describe('a stream that fails after reasoning only', () => {
  it('is retried: the discard reaches listeners, the retry\'s answer is logged, and both attempts count once', async () => {
    const { root, llm } = await boot([
      [{ reasoning: 'Let me think' }, { fail: { code: 'STREAM_CLOSED', message: 'the connection was cut' } }],
      [{ reasoning: 'Easy.' }, { text: 'Four.' }, { usage: answered }],
    ])
    const agent = await root.agents.create()
    const events: AgentEvent[] = []
    agent.subscribe((event) => events.push(event))
    const result = await agent.send('2 + 2?')
    expect(llm.requests).toHaveLength(2)
    expect(result).toMatchObject({ reason: 'completed', text: 'Four.' })
    expect(events.map((event) => event.type)).toEqual([
      'turn-start', 'context', 'reasoning-delta', 'attempt', 'usage', 'retry', 'discard', 'reasoning-delta', 'text-delta', 'attempt', 'usage', 'turn-end',
    ])

    const log = agent.session.events
    expect(types(log)).toEqual(['turn/start', 'user/message', 'step/start', 'request/header', 'llm/attempt', 'llm/retry', 'llm/resend', 'llm/attempt', 'assistant/message', 'step/end', 'turn/end'])
    const answer = eventData(log.find((event) => event.type === 'assistant/message')!, 'assistant/message')
    expect(answer.message.content).toEqual([{ type: 'reasoning', text: 'Easy.' }, { type: 'text', text: 'Four.' }])
    expect(answer.usage).toEqual(answered)

    // The cut attempt reported no usage: its estimate (the reasoning's characters) is counted once, beside the answer's.
    const [cut, retry] = log.filter((event) => event.type === 'llm/attempt').map((event) => eventData(event, 'llm/attempt'))
    expect(cut).toMatchObject({ retry: 0, shown: true, failure: { code: 'STREAM_CLOSED' }, usage: { outputTokens: Math.ceil('Let me think'.length / 4) }, usageEstimated: true })
    expect(retry).toMatchObject({ retry: 1, usage: answered })
    expect(result.usage).toEqual(addUsage(cut!.usage!, answered))
    expect(result.usageEstimated).toBe(true)
    expectValidLog(log)
  })
})
