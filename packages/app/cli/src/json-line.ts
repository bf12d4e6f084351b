/**
 * Every `--json` line rein prints (run's events and result, sessions, show, memory) goes through
 * here, so money reads the same everywhere: sums of floating-point prices pick up noise
 * (0.1 + 0.2 is 0.30000000000000004), which is rounded off here, on the way out; what is stored
 * and summed stays exact as computed.
 */

import { HIDDEN_CHARACTER, unicodeEscapes } from '@rein/base'

/** The keys that hold money in what the CLI prints: an attempt's or a total's `cost`, a usage event's `totalCost`. */
const MONEY_KEYS: ReadonlySet<string> = new Set(['cost', 'totalCost'])

/** Significant digits a cost keeps: far more than any price has, far fewer than float noise needs. */
const COST_DIGITS = 12

/**
 * Characters JSON leaves as they are that a terminal acts on or a reader cannot see (@rein/base's
 * `HIDDEN_CHARACTER`: C1 controls, of which U+009B starts an escape sequence as ESC [ does, bidi
 * overrides, zero-width and tag characters…) and the line and paragraph separators. They only occur
 * inside strings, where `\uXXXX` (a surrogate pair for one past U+FFFF) is the same text to any
 * JSON reader.
 */
const UNSEEN = new RegExp(`${HIDDEN_CHARACTER.source}|[\\u2028\\u2029]`, 'gu')

/**
 * `value` as one JSON line's text, each cost in it rounded to 12 significant digits, and each
 * character a terminal would act on escaped: a line printed raw to a terminal cannot move its
 * cursor, reorder its text or hide part of it.
 */
export function jsonLine(value: unknown): string {
  const json = JSON.stringify(value, function (this: unknown, key, field: unknown) {
    return MONEY_KEYS.has(key) && typeof field === 'number' && Number.isFinite(field) && isSpending(this) ? roundCost(field) : field
  })
  // `undefined` (or a function) has no JSON: the line says null rather than throw.
  return (json ?? 'null').replace(UNSEEN, unicodeEscapes)
}

/**
 * Whether `holder` is one of rein's spending records (an attempt, a usage event, a result, a total):
 * money there always sits beside its tokens. A `cost` in a tool's output or a plugin's event is theirs, left as it is.
 */
function isSpending(holder: unknown): boolean {
  return typeof holder === 'object' && holder !== null && ('usage' in holder || 'total' in holder)
}

/** A cost without floating-point noise: 12 significant digits. */
function roundCost(cost: number): number {
  return Number(cost.toPrecision(COST_DIGITS))
}
