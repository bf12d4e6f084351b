// The cost ledger on its own: retention, late descendants, estimates.
import type { RunIdentity } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import { CostLedger } from '../src/ledger.ts'

function run(runId: string, parentRunId?: string): RunIdentity {
  return Object.freeze({
    agent: 'main', sessionId: `s-${runId}`, conversationId: 's-root', runId, turnId: `s-${runId}/1`, anchor: 'a', depth: parentRunId ? 1 : 0,
    ...(parentRunId ? { parentRunId } : {}),
  })
}

const USAGE = { inputTokens: 10, outputTokens: 1 }

describe('cost ledger', () => {
  it('reports 0.1 and 0.2 spent as 0.3, not 0.30000000000000004, in own, children and total', () => {
    // OTLP's rein.cost.total showed 0.30000000000000004 where rein run and rein sessions said 0.3.
    const ledger = new CostLedger(10)
    ledger.start(run('p'))
    ledger.add(run('p'), USAGE, 0.1, false)
    ledger.add(run('p'), USAGE, 0.2, false)
    ledger.add(run('c', 'p'), USAGE, 0.1, false)
    ledger.add(run('c', 'p'), USAGE, 0.2, false)
    for (let i = 0; i < 8; i++) ledger.add(run('c8', 'p'), USAGE, 0.1, false)
    expect(ledger.report('p')).toMatchObject({ own: { money: 0.3 }, children: { money: 1.1 }, total: { money: 1.4 } })
    expect(ledger.report('c')?.own.money).toBe(0.3)
    expect(ledger.report('c8')?.own.money).toBe(0.8)
  })

  it('keeps the newest keepRuns ended runs and forgets older ones, never a live one', () => {
    const ledger = new CostLedger(2)
    const live = run('live')
    ledger.start(live)
    for (const id of ['r1', 'r2', 'r3']) {
      ledger.start(run(id))
      ledger.add(run(id), USAGE, 1, false)
      ledger.end(id)
    }
    expect(ledger.report('r1')).toBeUndefined()
    expect(ledger.report('r2')?.own.attempts).toBe(1)
    expect(ledger.report('r3')?.own.attempts).toBe(1)
    expect(ledger.report('live')?.own.attempts).toBe(0)
    expect(ledger.report('never')).toBeUndefined()
  })

  it('adds a descendant\'s usage that arrives after its parent ended, while the parent is kept', () => {
    const ledger = new CostLedger(10)
    ledger.start(run('p'))
    ledger.start(run('c', 'p'))
    ledger.end('p')
    ledger.add(run('c', 'p'), USAGE, 2, false)
    expect(ledger.report('p')?.children).toMatchObject({ usage: USAGE, money: 2, attempts: 1 })
  })

  it('rolls spend that came before its parent\'s run started into that run once it starts, up the tree', () => {
    // A resume continues a subagent (and that one its own) before the resumed runs begin.
    const ledger = new CostLedger(10)
    ledger.add(run('grandchild', 'child'), USAGE, 1, false)
    ledger.start(run('child', 'root'))
    ledger.add(run('child', 'root'), USAGE, 2, false)
    expect(ledger.report('root')).toBeUndefined()
    ledger.start(run('root'))
    ledger.add(run('root'), USAGE, 4, false)
    expect(ledger.report('child')?.children).toMatchObject({ money: 1, attempts: 1 })
    expect(ledger.report('root')).toMatchObject({
      own: { money: 4, attempts: 1 },
      children: { usage: { inputTokens: 20, outputTokens: 2 }, money: 3, attempts: 2 },
      total: { money: 7, attempts: 3 },
    })
  })

  it('keeps what a child spent for a run not started yet however many runs end before it starts', () => {
    // keepRuns 1: the continued child and its own children end before the resumed run starts.
    const ledger = new CostLedger(1)
    ledger.start(run('child', 'next'))
    ledger.add(run('child', 'next'), USAGE, 3, false)
    for (const id of ['g1', 'g2', 'elsewhere']) {
      ledger.start(run(id, id === 'elsewhere' ? undefined : 'child'))
      ledger.add(run(id, id === 'elsewhere' ? undefined : 'child'), USAGE, 1, false)
      ledger.end(id)
    }
    ledger.add(run('child', 'next'), USAGE, 5, false)
    ledger.end('child')
    ledger.start(run('next'))
    expect(ledger.report('next')?.children).toMatchObject({ money: 10, attempts: 4 })
  })

  it('never forgets an ended run for a parent only named so far, nor holds more of those than keepRuns', () => {
    const ledger = new CostLedger(2)
    ledger.start(run('p'))
    ledger.start(run('b', 'p'))
    ledger.end('p')
    for (const id of ['a1', 'a2']) { ledger.start(run(id)); ledger.end(id) }
    // p is forgotten; b (outliving it) names it again, and so do children of runs that never come.
    ledger.add(run('b', 'p'), USAGE, 1, false)
    for (const id of ['x1', 'x2', 'x3']) ledger.add(run(`child-of-${id}`, id), USAGE, 1, false)
    expect(ledger.report('a1')).toBeDefined()
    expect(ledger.report('a2')).toBeDefined()
    // The oldest named parents are dropped first: x3 is held, p and x1 are not.
    for (const id of ['p', 'x1', 'x3']) ledger.start(run(id))
    expect([ledger.report('p')?.children.attempts, ledger.report('x1')?.children.attempts, ledger.report('x3')?.children.attempts]).toEqual([0, 0, 1])
  })

  it('marks estimated usage and stops at an ancestor it never saw', () => {
    const ledger = new CostLedger(10)
    // Telemetry loaded mid-run: the child's parent is unknown, so only the child counts.
    ledger.add(run('c', 'unknown'), USAGE, 1, true)
    expect(ledger.report('c')?.own).toEqual({ usage: USAGE, money: 1, unpriced: false, estimated: true, attempts: 1 })
    expect(ledger.report('unknown')).toBeUndefined()
  })
})
