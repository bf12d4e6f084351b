/**
 * Cost roll-up: every provider attempt's usage is added to its run's `own` and, walking the
 * `parentRunId` chain, to each ancestor's `children` as it arrives, so a descendant counts exactly
 * once in every ancestor however deep the tree and however many children run at once. What is spent
 * for a parent not seen yet is held for it apart from the runs (a resume continues subagents before
 * the run they work for starts), and is that run's once it does.
 */

import { addMoney } from '@rein/base'
import { addUsage, type TokenUsage } from '@rein/llm'
import type { RunIdentity } from '@rein/tools'
import type { CostReport, Spend } from './types.ts'

/** A running sum over attempts. */
interface Account {
  usage: TokenUsage
  money: number
  attempts: number
  unpriced: boolean
  estimated: boolean
}

interface RunEntry {
  readonly parentRunId: string | undefined
  readonly own: Account
  readonly children: Account
}

/** Runs by id: the live ones, and the newest `keep` ended ones. */
export class CostLedger {
  private readonly runs = new Map<string, RunEntry>()
  /** Ended run ids, oldest first (a Set keeps insertion order). */
  private readonly ended = new Set<string>()
  /**
   * What descendants spent for runs only named as a parent so far, by run id, least recently added
   * to first: at most `keep`, apart from the runs so a run that never comes evicts no real one.
   */
  private readonly held = new Map<string, Account>()

  constructor(private readonly keep: number) {}

  /** Learns a run and its parent (at its turn start, or at its first attempt if telemetry came later). */
  start(identity: RunIdentity): void {
    this.entryOf(identity)
  }

  /** Counts one attempt that reported usage; `cost` undefined means the model has no price. */
  add(identity: RunIdentity, usage: TokenUsage, cost: number | undefined, estimated: boolean): void {
    const entry = this.entryOf(identity)
    const spent = emptyAccount()
    count(spent, usage, cost, estimated)
    merge(entry.own, spent)
    this.addToAncestors(entry.parentRunId, spent)
  }

  /**
   * Adds `spent` to the `children` of `parentId` and each of its ancestors. For a parent not known
   * it is held, and the walk stops until that run is seen and takes it on up.
   */
  private addToAncestors(parentId: string | undefined, spent: Account): void {
    // Bounded by the runs known, so a (never expected) cycle in parent links cannot loop.
    for (let hops = 0; parentId !== undefined && hops < this.runs.size; hops++) {
      const parent = this.runs.get(parentId)
      if (parent === undefined) return this.hold(parentId, spent)
      merge(parent.children, spent)
      parentId = parent.parentRunId
    }
  }

  /** Holds `spent` for a run not seen yet; past `keep` such runs, the one least recently added to is dropped. */
  private hold(runId: string, spent: Account): void {
    const account = this.held.get(runId) ?? emptyAccount()
    merge(account, spent)
    this.held.delete(runId)
    this.held.set(runId, account)
    for (const oldest of this.held.keys()) {
      if (this.held.size <= this.keep) break
      this.held.delete(oldest)
    }
  }

  /** Marks a run ended; once more than `keep` runs ended, the oldest one is forgotten. */
  end(runId: string): void {
    if (!this.runs.has(runId)) return
    this.ended.delete(runId)
    this.ended.add(runId)
    for (const oldest of this.ended) {
      if (this.ended.size <= this.keep) break
      this.ended.delete(oldest)
      this.runs.delete(oldest)
    }
  }

  /** The run's spend now; undefined for a run never seen or already forgotten. */
  report(runId: string): CostReport | undefined {
    const entry = this.runs.get(runId)
    if (entry === undefined) return undefined
    const { own, children } = entry
    const total: Account = {
      usage: addUsage(own.usage, children.usage),
      money: addMoney(own.money, children.money),
      attempts: own.attempts + children.attempts,
      unpriced: own.unpriced || children.unpriced,
      estimated: own.estimated || children.estimated,
    }
    return Object.freeze({ own: spendOf(own), children: spendOf(children), total: spendOf(total) })
  }

  clear(): void {
    this.runs.clear()
    this.ended.clear()
    this.held.clear()
  }

  private entryOf(identity: RunIdentity): RunEntry {
    let entry = this.runs.get(identity.runId)
    if (entry === undefined) {
      entry = { parentRunId: identity.parentRunId, own: emptyAccount(), children: emptyAccount() }
      this.runs.set(identity.runId, entry)
      // Seen at last: what its descendants spent before is its, and goes on up to its parent.
      const held = this.held.get(identity.runId)
      if (held !== undefined) {
        this.held.delete(identity.runId)
        merge(entry.children, held)
        this.addToAncestors(entry.parentRunId, held)
      }
    }
    return entry
  }
}

function emptyAccount(): Account {
  return { usage: { inputTokens: 0, outputTokens: 0 }, money: 0, attempts: 0, unpriced: false, estimated: false }
}

function count(account: Account, usage: TokenUsage, cost: number | undefined, estimated: boolean): void {
  account.usage = addUsage(account.usage, usage)
  account.attempts++
  if (cost === undefined) account.unpriced = true
  else account.money = addMoney(account.money, cost)
  if (estimated) account.estimated = true
}

/** Adds `other`'s counts to `account`. */
function merge(account: Account, other: Account): void {
  account.usage = addUsage(account.usage, other.usage)
  account.money = addMoney(account.money, other.money)
  account.attempts += other.attempts
  account.unpriced ||= other.unpriced
  account.estimated ||= other.estimated
}

/** A frozen snapshot; money is unknown when nothing was counted or something counted had no price. */
function spendOf(account: Account): Spend {
  const known = account.attempts > 0 && !account.unpriced
  return Object.freeze({
    usage: Object.freeze({ ...account.usage }),
    ...(known ? { money: account.money } : {}),
    unpriced: account.unpriced,
    estimated: account.estimated,
    attempts: account.attempts,
  })
}
