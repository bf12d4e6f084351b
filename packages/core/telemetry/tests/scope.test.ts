// The run's scope: never mixed between interleaved runs, parallel calls or nested subagents.
import { describe, expect, it } from 'vitest'
import type { RunScope, TelemetryRecord } from '../src/index.ts'
import { boot, byTask, call, meetTool, recorder, runIdOf, spawnTool, usage, type Seen } from './harness.ts'

/** Records by run id, in the order the sink got them. */
function byRun(records: readonly TelemetryRecord[]) {
  const runs = new Map<string, TelemetryRecord[]>()
  for (const record of records) {
    const list = runs.get(record.scope.runId) ?? []
    list.push(record)
    runs.set(record.scope.runId, list)
  }
  return runs
}

const shape = (records: readonly TelemetryRecord[]) => records.map((record) => `${record.kind}/${record.phase}`)

describe('run scope', () => {
  it('keeps two interleaved runs with parallel calls apart, in records and in scope()', async () => {
    const twoMeets = (run: string) => [
      [call('meet', { key: `${run}1` }, `${run}-c1`), call('meet', { key: `${run}2` }, `${run}-c2`), usage(1, 1)],
      [{ text: `${run} done` }, usage(1, 1)],
    ]
    const { root, create } = await boot(byTask({ A: twoMeets('A'), B: twoMeets('B') }))
    const seen: Seen = new Map()
    // All four calls of both runs are inside their bodies at once before any records its scope.
    meetTool(root, seen, 4)
    const sink = recorder()
    root.telemetry.sink(sink)
    const [a, b] = [await create(), await create()]
    const results = await Promise.all([a.send('A'), b.send('B')])
    expect(results.map((result) => result.text)).toEqual(['A done', 'B done'])

    for (const [agent, run] of [[a, 'A'], [b, 'B']] as const) {
      const scope: RunScope = { runId: runIdOf(agent), turnId: `${agent.session.id}/1`, sessionId: agent.session.id, conversationId: agent.session.id, agentName: 'main', depth: 0 }
      expect(seen.get(`${run}1`)).toEqual(scope)
      expect(seen.get(`${run}2`)).toEqual(scope)
      const own = sink.records.filter((record) => record.scope.runId === scope.runId)
      for (const record of own) expect(record.scope).toEqual(scope)
      expect(shape(own)).toEqual([
        'run/start', 'step/start', 'llm_call/start', 'llm_call/end',
        'tool_call/start', 'tool_call/start', 'tool_call/end', 'tool_call/end', 'step/end',
        'step/start', 'llm_call/start', 'llm_call/end', 'step/end', 'run/end',
      ])
      // A run's tool records name its own calls only.
      const calls = own.flatMap((record) => record.kind === 'tool_call' ? [record.callId] : [])
      expect(new Set(calls)).toEqual(new Set([`${run}-c1`, `${run}-c2`]))
    }
    expect(sink.records).toHaveLength(28)
    // They did interleave: each run's records begin before the other's end.
    const index = (runId: string) => sink.records.flatMap((record, i) => record.scope.runId === runId ? [i] : [])
    const [ia, ib] = [index(runIdOf(a)), index(runIdOf(b))]
    expect(ia[0]!).toBeLessThan(ib.at(-1)!)
    expect(ib[0]!).toBeLessThan(ia.at(-1)!)
  })

  it('gives each tool body of nested, parallel subagents its own run\'s scope, and the parent\'s back after', async () => {
    const { root, create } = await boot(byTask({
      go: [[call('spawn', { task: 'c1' }, 's1'), call('spawn', { task: 'c2' }, 's2')], [{ text: 'root done' }]],
      c1: [[call('spawn', { task: 'g1' }, 's3')], [{ text: 'c1 done' }]],
      g1: [[call('meet', { key: 'g1' }, 'm1')], [{ text: 'g1 done' }]],
      c2: [[call('meet', { key: 'c2' }, 'm2')], [{ text: 'c2 done' }]],
    }))
    const seen: Seen = new Map()
    spawnTool(root, seen)
    // c2 (depth 1) and g1 (depth 2) are inside their calls at the same time.
    meetTool(root, seen, 2)
    const sink = recorder()
    root.telemetry.sink(sink)
    const parent = await create()
    expect((await parent.send('go')).text).toBe('root done')

    const conversationId = parent.session.id
    const rootScope: RunScope = { runId: runIdOf(parent), turnId: `${parent.session.id}/1`, sessionId: parent.session.id, conversationId, agentName: 'main', depth: 0 }
    for (const key of ['c1:before', 'c1:after', 'c2:before', 'c2:after']) expect(seen.get(key)).toEqual(rootScope)
    const c1 = seen.get('g1:before')!
    expect(c1).toMatchObject({ depth: 1, agentName: 'helper', parentRunId: rootScope.runId, parentCallId: 's1', conversationId })
    expect(seen.get('g1:after')).toEqual(c1)
    expect(seen.get('g1')).toMatchObject({ depth: 2, agentName: 'helper', parentRunId: c1.runId, parentCallId: 's3', conversationId })
    expect(seen.get('c2')).toMatchObject({ depth: 1, agentName: 'helper', parentRunId: rootScope.runId, parentCallId: 's2', conversationId })
    expect(new Set([rootScope.runId, c1.runId, seen.get('g1')!.runId, seen.get('c2')!.runId]).size).toBe(4)

    // The records agree: four runs, each with one scope, the same scope() gave its tool bodies.
    const runs = byRun(sink.records)
    expect(runs.size).toBe(4)
    for (const scope of [rootScope, c1, seen.get('g1')!, seen.get('c2')!]) {
      for (const record of runs.get(scope.runId)!) expect(record.scope).toEqual(scope)
    }
  })

  it('is undefined outside a tool body, and inside one while no sink is registered', async () => {
    const { root, create } = await boot(byTask({
      first: [[call('meet', { key: 'no sink' }, 'm1')], [{ text: 'done' }]],
      second: [[call('meet', { key: 'sink' }, 'm2')], [{ text: 'done' }]],
      third: [[call('meet', { key: 'sink gone' }, 'm3')], [{ text: 'done' }]],
    }))
    const seen: Seen = new Map()
    meetTool(root, seen, 1)
    expect(root.telemetry.scope()).toBeUndefined()
    await (await create()).send('first')
    const dispose = root.telemetry.sink(recorder())
    const agent = await create()
    await agent.send('second')
    await dispose()
    await (await create()).send('third')
    expect(Object.fromEntries(seen)).toEqual({ 'no sink': undefined, 'sink': expect.objectContaining({ runId: runIdOf(agent) }), 'sink gone': undefined })
  })
})
