import { assistantMessage, userMessage } from '@rein/llm'
import { describe, expect, it } from 'vitest'
import { planRepair, repairEvents, type SessionEvent } from '../src/index.ts'

const source = { kind: 'model', provider: 'p', model: 'm' } as const
function log(...entries: [string, unknown][]): SessionEvent[] {
  return entries.map(([type, data], seq) => ({ seq, type, time: '2026-01-01T00:00:00.000Z', data: data as never }))
}
const calls = assistantMessage([
  { type: 'text', text: 'Doing three things.' },
  { type: 'tool-call', id: 'c1', name: 'append_line', arguments: '{"line":"x"}' },
  { type: 'tool-call', id: 'c2', name: 'write_fixed', arguments: '{}' },
  { type: 'tool-call', id: 'c3', name: 'append_line', arguments: '{"line":"y"}' },
  { type: 'tool-call', id: 'c4', name: 'read', arguments: '{}' },
], source, 'a1')
const opening: [string, unknown][] = [
  ['turn/start', { turn: 1 }],
  ['user/message', { message: userMessage('go', 'u1') }],
  ['step/start', { turn: 1, step: 1 }],
  ['assistant/message', { message: calls, provider: 'p', model: 'm' }],
]
const replaySafe = (name: string) => name === 'write_fixed' || name === 'read'

describe('planRepair', () => {
  it('needs nothing for a log that ends between turns', () => {
    expect(planRepair(log(['turn/start', { turn: 1 }], ['turn/end', { turn: 1, reason: 'completed' }]), replaySafe)).toEqual({ calls: [] })
    expect(repairEvents({ calls: [] })).toEqual([])
  })

  it('pairs every unpaired call: not started, unknown, or re-run when replay-safe then and now', () => {
    const events = log(
      ...opening,
      ['tool/call', { callId: 'c1', name: 'append_line', arguments: '{"line":"x"}', replaySafe: false }],
      ['tool/result', { callId: 'c1', content: [{ type: 'text', text: 'ok' }], isError: false }],
      ['tool/call', { callId: 'c2', name: 'write_fixed', arguments: '{}', replaySafe: true }],
      ['tool/call', { callId: 'c3', name: 'append_line', arguments: '{"line":"y"}', replaySafe: false }],
    )
    const plan = planRepair(events, replaySafe)
    expect(plan).toEqual({
      turn: 1,
      step: { turn: 1, step: 1 },
      calls: [
        { callId: 'c2', name: 'write_fixed', arguments: '{}', action: 'rerun' },
        { callId: 'c3', name: 'append_line', arguments: '{"line":"y"}', action: 'outcome-unknown' },
        { callId: 'c4', name: 'read', arguments: '{}', action: 'not-started' },
      ],
    })
    const rerun = { callId: 'c2', content: [{ type: 'text' as const, text: 'written' }], isError: false }
    const drafts = repairEvents(plan, new Map([['c2', rerun]]))
    expect(drafts.map((draft) => [draft.type, (draft.data as { code?: string }).code])).toEqual([
      ['tool/result', undefined], ['tool/result', 'TOOL_OUTCOME_UNKNOWN'], ['tool/result', 'TOOL_NOT_STARTED'], ['step/end', undefined], ['turn/end', undefined],
    ])
    expect(drafts[0]!.data).toEqual(rerun)
    expect(drafts[1]!.data).toMatchObject({ callId: 'c3', isError: true, content: [{ type: 'text', text: expect.stringContaining('Check its effects before calling it again') }] })
    expect(drafts.at(-1)).toEqual({ type: 'turn/end', data: { turn: 1, reason: 'interrupted' } })
  })

  it('does not re-run a call that was not replay-safe when recorded, even if it is now', () => {
    const events = log(...opening, ['tool/call', { callId: 'c2', name: 'write_fixed', arguments: '{}', replaySafe: false }])
    expect(planRepair(events, replaySafe).calls.find((call) => call.callId === 'c2')?.action).toBe('outcome-unknown')
  })

  it('does not re-run a call whose tool stopped being replay-safe', () => {
    const events = log(...opening, ['tool/call', { callId: 'c2', name: 'write_fixed', arguments: '{}', replaySafe: true }])
    expect(planRepair(events, () => false).calls.find((call) => call.callId === 'c2')?.action).toBe('outcome-unknown')
  })

  it('closes a turn cut before the model answered', () => {
    const events = log(['turn/start', { turn: 3 }], ['user/message', { message: userMessage('hi', 'u') }], ['step/start', { turn: 3, step: 1 }])
    const plan = planRepair(events, replaySafe)
    expect(repairEvents(plan)).toEqual([
      { type: 'step/end', data: { turn: 3, step: 1 } },
      { type: 'turn/end', data: { turn: 3, reason: 'interrupted' } },
    ])
  })
})

describe('planRepair with tool-call ids that repeat (servers that omit ids, issue #8)', () => {
  const ask = (id: string, step: number) => assistantMessage([{ type: 'tool-call', id, name: 'append_line', arguments: '{}' }], source, `a${step}`)
  const result = (callId: string) => ['tool/result', { callId, content: [{ type: 'text', text: 'ok' }], isError: false }] as [string, unknown]

  it('repairs a call whose id an earlier, completed step already used', () => {
    const events = log(
      ['turn/start', { turn: 1 }],
      ['user/message', { message: userMessage('go', 'u1') }],
      ['step/start', { turn: 1, step: 1 }],
      ['assistant/message', { message: ask('call_0', 1), provider: 'p', model: 'm' }],
      ['tool/call', { callId: 'call_0', name: 'append_line', arguments: '{}', replaySafe: false }],
      result('call_0'),
      ['step/end', { turn: 1, step: 1 }],
      ['step/start', { turn: 1, step: 2 }],
      ['assistant/message', { message: ask('call_0', 2), provider: 'p', model: 'm' }],
      ['tool/call', { callId: 'call_0', name: 'append_line', arguments: '{}', replaySafe: false }],
    )
    expect(planRepair(events, replaySafe)).toEqual({
      turn: 1,
      step: { turn: 1, step: 2 },
      calls: [{ callId: 'call_0', name: 'append_line', arguments: '{}', action: 'outcome-unknown' }],
    })
  })

  it('looks only at the last turn: calls an earlier, ended turn left unpaired need nothing', () => {
    const earlier = [...opening, ['turn/end', { turn: 1, reason: 'interrupted' }]] as [string, unknown][]
    expect(planRepair(log(...earlier), replaySafe)).toEqual({ calls: [] })
    // Steps after an ended turn and before the next start belong to no turn.
    expect(planRepair(log(...earlier, ['step/start', { turn: 1, step: 2 }], ['assistant/message', { message: calls, provider: 'p', model: 'm' }]), replaySafe)).toEqual({ calls: [] })
    const next = log(...earlier, ['turn/start', { turn: 2 }], ['step/start', { turn: 2, step: 1 }], ['assistant/message', { message: calls, provider: 'p', model: 'm' }],
      ['tool/call', { callId: 'c1', name: 'append_line', arguments: '{"line":"x"}', replaySafe: false }])
    const plan = planRepair(next, replaySafe)
    expect(plan).toMatchObject({ turn: 2, step: { turn: 2, step: 1 } })
    expect(plan.calls.map((call) => [call.callId, call.action])).toEqual([['c1', 'outcome-unknown'], ['c2', 'not-started'], ['c3', 'not-started'], ['c4', 'not-started']])
  })

  it('pairs repeated ids within one step in order', () => {
    const twice = assistantMessage([
      { type: 'tool-call', id: 'call_0', name: 'append_line', arguments: '{"n":1}' },
      { type: 'tool-call', id: 'call_0', name: 'read', arguments: '{"n":2}' },
    ], source, 'a1')
    const events = log(
      ['turn/start', { turn: 1 }],
      ['step/start', { turn: 1, step: 1 }],
      ['assistant/message', { message: twice, provider: 'p', model: 'm' }],
      ['tool/call', { callId: 'call_0', name: 'append_line', arguments: '{"n":1}', replaySafe: false }],
      result('call_0'),
      ['tool/call', { callId: 'call_0', name: 'read', arguments: '{"n":2}', replaySafe: true }],
    )
    expect(planRepair(events, replaySafe).calls).toEqual([{ callId: 'call_0', name: 'read', arguments: '{"n":2}', action: 'rerun' }])
  })
})
