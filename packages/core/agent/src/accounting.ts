/** Usage and money summed over provider attempts: every attempt that reported usage counts once. */

import { addMoney } from '@rein/base'
import { addUsage, type TokenUsage } from '@rein/llm'

const ZERO: TokenUsage = Object.freeze({ inputTokens: 0, outputTokens: 0 })

/** A running total. Money is unknown once any attempt with usage had no price. */
export class Tally {
  private _usage: TokenUsage = ZERO
  private _money = 0
  private _counted = 0
  private _unpriced = false
  private _estimated = false

  add(usage: TokenUsage | undefined, cost: number | undefined, estimated = false): void {
    if (!usage) return
    this._usage = addUsage(this._usage, usage)
    this._counted++
    if (cost === undefined) this._unpriced = true
    else this._money = addMoney(this._money, cost)
    if (estimated) this._estimated = true
  }

  get usage(): TokenUsage {
    return this._usage
  }

  /** Undefined while nothing was counted, and once a model used was unpriced. */
  get cost(): number | undefined {
    return this._counted === 0 || this._unpriced ? undefined : this._money
  }

  /** True when part of the usage is rein's estimate (the provider reported none, or not all of the output). */
  get estimated(): boolean {
    return this._estimated
  }

  /** A new tally holding this one's counts and `other`'s. */
  plus(other: Tally): Tally {
    const sum = new Tally()
    for (const tally of [this, other]) {
      sum._usage = addUsage(sum._usage, tally._usage)
      sum._money = addMoney(sum._money, tally._money)
      sum._counted += tally._counted
      sum._unpriced ||= tally._unpriced
      sum._estimated ||= tally._estimated
    }
    return sum
  }

  /** Attempts counted (those that reported usage). */
  get counted(): number {
    return this._counted
  }

  /** True when something was counted but its money is unknown. */
  get unpriced(): boolean {
    return this._unpriced
  }
}
