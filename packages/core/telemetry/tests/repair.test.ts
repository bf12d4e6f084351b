// A model request a kill -9 cut off: the next process's repair records it in the session log as an
// estimated attempt, which `rein sessions` counts. Telemetry must count it too, once: the killed
// process never told it (it was in flight), and a second resume finds it recorded and tells nothing.
import { addMoney } from '@rein/base'
import type { AdapterRequest } from '@rein/llm'
import { eventData, MemorySessionStore, spending, type SessionEvent } from '@rein/session'
import type { ScriptedLlm } from '@rein/testkit'
import { describe, expect, it } from 'vitest'
import type { LlmCallEndRecord, TelemetryRecord } from '../src/index.ts'
import { boot, byTask, call, recorder, spawnTool, usage, type Seen } from './harness.ts'

/**
 * From now on the model takes the requests `which` picks and never answers them (until stopped):
 * where a kill -9 finds one. Resolves once the first such request reached it, after the log was made
 * durable for it.
 */
function stall(llm: ScriptedLlm, which: (request: AdapterRequest) => boolean): Promise<void> {
  const answer = llm.stream.bind(llm)
  return new Promise((sent) => {
    Object.assign(llm, {
      stream: (request: AdapterRequest) => {
        if (!which(request)) return answer(request)
        llm.requests.push(request)
        sent()
        return (async function* () {
          await new Promise((_resolve, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true }))
          yield* []
        })()
      },
    })
  })
}

/** What a kill -9 leaves of sessions `ids`: their durable events, in a store the killed process never writes to again. */
async function killed(store: MemorySessionStore, ids: readonly string[]): Promise<MemorySessionStore> {
  const left = new MemorySessionStore()
  for (const id of ids) {
    const { header, events } = await store.load(id)
    await left.create(header)
    await left.append(id, events)
    await left.close(id)
  }
  return left
}

const ends = (records: readonly TelemetryRecord[]) => records.filter((record): record is LlmCallEndRecord => record.kind === 'llm_call' && record.phase === 'end')
const starts = (records: readonly TelemetryRecord[]) => records.filter((record) => record.kind === 'llm_call' && record.phase === 'start')
const attempts = (events: readonly SessionEvent[]) => events.filter((event) => event.type === 'llm/attempt').map((event) => eventData(event, 'llm/attempt'))
const runIds = (events: readonly SessionEvent[]) => events.filter((event) => event.type === 'turn/start').map((event) => eventData(event, 'turn/start').runId!)

/** Tokens and money over attempt records, as telemetry's sinks got them. */
function total(records: readonly LlmCallEndRecord[]) {
  let inputTokens = 0
  let outputTokens = 0
  let money = 0
  for (const record of records) {
    inputTokens += record.usage?.inputTokens ?? 0
    outputTokens += record.usage?.outputTokens ?? 0
    money = addMoney(money, record.cost ?? 0)
  }
  return { inputTokens, outputTokens, money }
}

describe('a request a crash left in flight', () => {
  it('counts in telemetry the estimated attempt a crash left in flight, as the session log does, once however often the session is resumed', async () => {
    const store = new MemorySessionStore()
    const dead = await boot([[{ text: 'one' }, usage(10, 5)]], { store })
    const deadSink = recorder('dead')
    dead.root.telemetry.sink(deadSink)
    const agent = await dead.create({ sessionId: 'cut' })
    expect(await agent.send('first')).toMatchObject({ reason: 'completed' })
    const sent = stall(dead.llm, () => true)
    const running = agent.send('second, a question long enough to count')
    await sent
    const left = await killed(store, ['cut'])
    // What the killed process told before the kill; it tells nothing after.
    const told = ends(deadSink.records)
    agent.cancel()
    await running

    const next = await boot([], { store: left })
    const sink = recorder()
    next.root.telemetry.sink(sink)
    await (await next.root.agents.resume('cut')).agent.close()
    await (await next.root.agents.resume('cut')).agent.close()

    const { events } = await left.load('cut')
    const [, cutRun] = runIds(events)
    const estimate = attempts(events).find((attempt) => attempt.failure?.code === 'ABORTED')!
    expect(estimate).toMatchObject({ usageEstimated: true })
    const repaired = ends(sink.records)
    expect(repaired).toEqual([expect.objectContaining({
      repaired: true, usageEstimated: true, errorCode: 'ABORTED', usage: estimate.usage, cost: estimate.cost,
      route: 'scripted', requestModel: 'm', step: 1, retry: 0, fallback: 0,
      startedAt: estimate.startedAt, endedAt: estimate.startedAt,
      scope: expect.objectContaining({ runId: cutRun, sessionId: 'cut', turnId: 'cut/2' }),
    })])
    // Told as what it is, an attempt that ended: it never started in this process.
    expect(starts(sink.records)).toEqual([])
    expect(next.root.telemetry.cost(cutRun!)?.own).toMatchObject({ usage: estimate.usage, money: estimate.cost, estimated: true, attempts: 1 })
    // Both processes' telemetry together, as the session log counts it.
    const spent = spending(events)
    expect(total([...told, ...repaired])).toEqual({ inputTokens: spent.usage.inputTokens, outputTokens: spent.usage.outputTokens, money: spent.cost })
  })

  it('counts a subagent\'s cut-off attempt once in its crashed run, not again for the parent that resumes it', async () => {
    const store = new MemorySessionStore()
    const seen: Seen = new Map()
    const script = byTask({
      go: [[call('spawn', { task: 'child task' }, 's1'), usage(100, 10)]],
      'child task': [],
    })
    const dead = await boot(script, { store })
    spawnTool(dead.root, seen)
    const deadSink = recorder('dead')
    dead.root.telemetry.sink(deadSink)
    const sent = stall(dead.llm, (request) => request.messages[0]?.content[0]?.type === 'text' && (request.messages[0].content[0] as { text: string }).text === 'child task')
    const parent = await dead.create({ sessionId: 'parent' })
    const running = parent.send('go')
    await sent
    const child = dead.root.agents.list().find((agent) => agent.parent !== undefined)!
    const childId = child.session.id
    const left = await killed(store, ['parent', childId])
    const told = ends(deadSink.records)
    child.cancel()
    parent.cancel()
    await running

    const next = await boot(byTask({}), { store: left })
    spawnTool(next.root, seen)
    const sink = recorder()
    next.root.telemetry.sink(sink)
    // The child resumed by itself (`rein resume <child>`), then the parent, then each again.
    await (await next.root.agents.resume(childId)).agent.close()
    await (await next.root.agents.resume('parent')).agent.close()
    await (await next.root.agents.resume(childId)).agent.close()
    await (await next.root.agents.resume('parent')).agent.close()

    const { events: childEvents } = await left.load(childId)
    const { events: parentEvents } = await left.load('parent')
    const [childRun] = runIds(childEvents)
    const [parentRun] = runIds(parentEvents)
    const repaired = ends(sink.records)
    expect(repaired).toEqual([expect.objectContaining({ repaired: true, scope: expect.objectContaining({ runId: childRun, parentRunId: parentRun, sessionId: childId }) })])
    const estimate = repaired[0]!.usage!
    expect(next.root.telemetry.cost(childRun!)?.total).toMatchObject({ usage: estimate, attempts: 1 })
    // The crashed parent run is not this process's: nothing is rolled into a run here twice.
    expect(next.root.telemetry.cost(parentRun!)).toBeUndefined()
    const spent = [spending(parentEvents), spending(childEvents)]
    expect(total([...told, ...repaired])).toEqual({
      inputTokens: spent[0]!.usage.inputTokens + spent[1]!.usage.inputTokens,
      outputTokens: spent[0]!.usage.outputTokens + spent[1]!.usage.outputTokens,
      money: addMoney(spent[0]!.cost!, spent[1]!.cost!),
    })
  })
})
