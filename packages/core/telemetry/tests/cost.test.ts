// Cost roll-up: a descendant's usage counts once in each ancestor's children, however deep or parallel.
import { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import TelemetryService from '../src/index.ts'
import type { CostReport, LlmCallEndRecord, RunEndRecord, RunStartRecord, Spend } from '../src/index.ts'
import { PRICED, boot, bootWithoutTelemetry, byTask, call, meetTool, recorder, runIdOf, spawnTool, usage, type Seen } from './harness.ts'

/** A priced spend: money is input + 2 × output (see PRICED). */
function spend(inputTokens: number, outputTokens: number, attempts: number): Spend {
  return { usage: { inputTokens, outputTokens }, ...(attempts > 0 ? { money: inputTokens + 2 * outputTokens } : {}), unpriced: false, estimated: false, attempts }
}

describe('cost', () => {
  it('counts a compaction between turns as a run of its own, with no sink registered too', async () => {
    const { root, create } = await boot([
      [{ text: 'one' }, usage(10, 1)], [{ text: 'two' }, usage(20, 2)], [{ text: 'three' }, usage(30, 3)],
      [{ text: '## Goal\nGo on.' }, usage(700, 40)],
    ], { models: [{ ...PRICED, contextWindow: 8_000 }] })
    const runs: string[] = []
    root.on('agent/compaction-end', (event) => { runs.push(event.identity.runId) })
    const agent = await create()
    for (const text of ['a', 'b', 'c']) await agent.send(text)
    await agent.compactNow()
    expect(runs).toHaveLength(1)
    expect(root.telemetry.cost(runs[0]!)).toEqual({ own: spend(700, 40, 1), children: spend(0, 0, 0), total: spend(700, 40, 1) })
  })

  it('counts every descendant of nested, parallel subagents exactly once', async () => {
    const { root, create } = await boot(byTask({
      go: [[call('spawn', { task: 'c1' }, 's1'), call('spawn', { task: 'c2' }, 's2'), usage(100, 10)], [{ text: 'root done' }, usage(200, 20)]],
      c1: [[call('spawn', { task: 'g1' }, 's3'), call('spawn', { task: 'g2' }, 's4'), usage(30, 3)], [{ text: 'c1 done' }, usage(40, 4)]],
      c2: [[{ text: 'c2 done' }, usage(50, 5)]],
      g1: [[call('meet', { key: 'g1' }, 'm1'), usage(7, 1)], [{ text: 'g1 done' }, usage(8, 1)]],
      g2: [[{ text: 'g2 done' }, usage(9, 2)]],
    }))
    const seen: Seen = new Map()
    spawnTool(root, seen)
    meetTool(root, seen, 1)
    const sink = recorder()
    root.telemetry.sink(sink)
    const parent = await create()
    await parent.send('go')

    const starts = sink.records.filter((record): record is RunStartRecord => record.kind === 'run' && record.phase === 'start')
    const runOf = (parentCallId: string | undefined) => starts.find((record) => record.scope.parentCallId === parentCallId)!.scope.runId
    const ids = { root: runIdOf(parent), c1: runOf('s1'), c2: runOf('s2'), g1: runOf('s3'), g2: runOf('s4') }
    expect(ids.root).toBe(runOf(undefined))
    expect(new Set(Object.values(ids)).size).toBe(5)
    const { telemetry } = root

    expect(telemetry.cost(ids.g1)).toEqual({ own: spend(15, 2, 2), children: spend(0, 0, 0), total: spend(15, 2, 2) })
    expect(telemetry.cost(ids.g2)).toEqual({ own: spend(9, 2, 1), children: spend(0, 0, 0), total: spend(9, 2, 1) })
    expect(telemetry.cost(ids.c2)).toEqual({ own: spend(50, 5, 1), children: spend(0, 0, 0), total: spend(50, 5, 1) })
    expect(telemetry.cost(ids.c1)).toEqual({ own: spend(70, 7, 2), children: spend(24, 4, 3), total: spend(94, 11, 5) })
    expect(telemetry.cost(ids.root)).toEqual({ own: spend(300, 30, 2), children: spend(144, 16, 6), total: spend(444, 46, 8) })

    // The root's total is every attempt of the tree, once.
    const attempts = sink.records.filter((record): record is LlmCallEndRecord => record.kind === 'llm_call' && record.phase === 'end')
    expect(attempts).toHaveLength(8)
    expect(attempts.reduce((sum, record) => sum + record.usage!.inputTokens, 0)).toBe(444)
    // Each run's end record carries its report as it stood then: children end before their parent.
    const ends = sink.records.filter((record): record is RunEndRecord => record.kind === 'run' && record.phase === 'end')
    for (const end of ends) expect(end.cost).toEqual(telemetry.cost(end.scope.runId))
    expect(ends.at(-1)!.scope.runId).toBe(ids.root)
  })

  it('keeps the cost of a run first heard from at its end, with its child\'s attempts, without any sink', async () => {
    const costs: (CostReport | undefined)[] = []
    for (const withSink of [true, false]) {
      const { root, create } = await bootWithoutTelemetry(byTask({
        go: [[call('spawn', {}, 's1'), usage(10, 1)]],
        c: [[call('load', {}, 'l1'), usage(100, 5)], [{ text: 'child done' }, usage(300, 7)]],
      }))
      // Telemetry loads while the child runs: the root's start and its attempt came before it.
      root.tools.register(defineTool({
        name: 'spawn', description: 'Runs a subagent.', parameters: {}, effects: ['read'],
        output: { schema: { type: 'string' }, render: (_args, value) => value },
        execute: async (_args, run) => {
          const child = await root.agents.create({ parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } })
          try {
            return (await child.send('c')).text
          } finally {
            await child.close()
          }
        },
      }))
      root.tools.register(defineTool({
        name: 'load', description: 'Loads telemetry.', parameters: {}, effects: ['read'],
        output: { schema: { type: 'string' }, render: (_args, value) => value },
        execute: async () => {
          await root.plugin(TelemetryService, {})
          if (withSink) root.telemetry.sink(recorder())
          return 'loaded'
        },
      }))
      // maxSteps 3: the child takes 2, so the root's turn ends once the call returns, asking nothing more.
      const parent = await create({ maxSteps: 3 })
      await parent.send('go')
      costs.push(root.telemetry.cost(runIdOf(parent)))
    }
    const heard = { own: spend(0, 0, 0), children: spend(300, 7, 1), total: spend(300, 7, 1) }
    expect(costs).toEqual([heard, heard])
  })

  it('rolls cost up without any sink', async () => {
    const { root, create } = await boot(byTask({
      go: [[call('spawn', { task: 'c' }, 's1'), usage(10, 1)], [{ text: 'done' }, usage(10, 1)]],
      c: [[{ text: 'child done' }, usage(5, 1)]],
    }))
    spawnTool(root, new Map())
    const parent = await create()
    await parent.send('go')
    expect(root.telemetry.cost(runIdOf(parent))).toEqual({ own: spend(20, 2, 2), children: spend(5, 1, 1), total: spend(25, 3, 3) })
  })

  it('shows tokens and says the money is unknown when a model in the tree has no price', async () => {
    const { root, create } = await boot(byTask({
      go: [[call('spawn', { task: 'c' }, 's1'), usage(10, 1)], [{ text: 'done' }, usage(10, 1)]],
      c: [[{ text: 'child done' }, usage(5, 1)]],
    }))
    spawnTool(root, new Map(), 'free')
    const sink = recorder()
    root.telemetry.sink(sink)
    const parent = await create()
    await parent.send('go')
    const unpriced = { usage: { inputTokens: 5, outputTokens: 1 }, unpriced: true, estimated: false, attempts: 1 }
    const report = root.telemetry.cost(runIdOf(parent))!
    expect(report).toEqual({
      own: spend(20, 2, 2),
      children: unpriced,
      total: { usage: { inputTokens: 25, outputTokens: 3 }, unpriced: true, estimated: false, attempts: 3 },
    })
    expect('money' in report.total).toBe(false)
    const childEnd = sink.records.find((record): record is RunEndRecord => record.kind === 'run' && record.phase === 'end' && record.scope.depth === 1)!
    expect(childEnd.cost).toEqual({ own: unpriced, children: spend(0, 0, 0), total: unpriced })
    const childAttempt = sink.records.find((record): record is LlmCallEndRecord => record.kind === 'llm_call' && record.phase === 'end' && record.scope.depth === 1)!
    expect(childAttempt).toMatchObject({ requestModel: 'free', usage: { inputTokens: 5, outputTokens: 1 } })
    expect(childAttempt.cost).toBeUndefined()
  })

  it('counts the attempts that reported usage, a retry included, each once', async () => {
    const { root, create } = await boot([
      [{ fail: { code: 'SERVER', message: 'overloaded' } }],
      [{ text: 'done' }, usage(6, 1)],
    ])
    const sink = recorder()
    root.telemetry.sink(sink)
    const agent = await create()
    expect(await agent.send('go')).toMatchObject({ reason: 'completed' })
    const attempts = sink.records.filter((record): record is LlmCallEndRecord => record.kind === 'llm_call' && record.phase === 'end')
    expect(attempts.map((record) => [record.retry, record.errorCode, record.usage])).toEqual([
      [0, 'SERVER', undefined],
      [1, undefined, { inputTokens: 6, outputTokens: 1 }],
    ])
    expect(root.telemetry.cost(runIdOf(agent))).toEqual({ own: spend(6, 1, 1), children: spend(0, 0, 0), total: spend(6, 1, 1) })
  })
})
