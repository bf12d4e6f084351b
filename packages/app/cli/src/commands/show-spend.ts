/**
 * Where `rein show` puts each token the session's totals count, so its figures add up to what
 * `rein sessions` lists: an answer carries the attempt that produced it, and every other attempt
 * (failed, retried, cut off, a summary request) has a line of its own. Which records count is
 * `spending`'s rule (@rein/session): a turn's `llm/attempt` records when it has any, else, for a
 * turn logged before they existed, its answers' own usage.
 */

import { formatMoney, groupDigits } from '@rein/base'
import type { TokenUsage } from '@rein/llm'
import { eventData, spending, type CoreEventData, type SessionEvent } from '@rein/session'
import { formatTokens, formatUsage, tokenCount } from '../render.ts'

type Attempt = CoreEventData['llm/attempt']

/** What one line shows as spent: tokens, money when priced, and whether the tokens are an estimate. */
export interface Spent {
  usage?: TokenUsage
  cost?: number
  usageEstimated?: true
}

export interface SpendPlan {
  /** By the answer's seq: the figures its bracket shows. An answer not here shows none (its attempt has a line). */
  answers: ReadonlyMap<number, Spent>
  /** By the attempt's seq: attempts shown on a line of their own, whether a summary request made them, and whether its summary went unused. */
  attempts: ReadonlyMap<number, ShownAttempt>
}

/** An attempt on a line of its own; `unused`: a summary request that answered, and no compaction followed (its summary was refused). */
interface ShownAttempt {
  attempt: Attempt
  summary: boolean
  unused?: true
}

/** Decides, in one pass over the log, which line shows each counted spend. */
export function planSpend(events: readonly SessionEvent[]): SpendPlan {
  const answers = new Map<number, Spent>()
  const attempts = new Map<number, ShownAttempt>()
  let part = { attempts: [] as (ShownAttempt & { seq: number })[], answers: [] as { seq: number; spent: Spent; from?: Attempt }[] }
  /** The current summary request's answered attempt, until a compaction shows its summary was used. */
  let answeredSummary: ShownAttempt | undefined
  let pending: { seq: number; attempt: Attempt } | undefined
  let summarizing = false
  const close = () => {
    const paired = new Set(part.answers.flatMap((answer) => (answer.from ? [answer.from] : [])))
    if (part.attempts.length === 0) for (const answer of part.answers) answers.set(answer.seq, answer.spent)
    for (const answer of part.answers) if (answer.from) answers.set(answer.seq, answer.from)
    for (const { seq, ...shown } of part.attempts) if (!paired.has(shown.attempt)) attempts.set(seq, shown)
    part = { attempts: [], answers: [] }
    pending = undefined
  }
  for (const event of events) {
    if (event.type === 'turn/start' || event.type === 'turn/end' || event.type === 'session/forked') close()
    if (event.type === 'context/compacted' && answeredSummary) delete answeredSummary.unused
    if (event.type === 'summary/start') summarizing = true
    else if (event.type === 'context/compacted' || event.type === 'step/start' || event.type === 'turn/start' || event.type === 'turn/end') summarizing = false
    if (!summarizing) answeredSummary = undefined
    if (event.type === 'llm/attempt') {
      const attempt = eventData(event, 'llm/attempt')
      const shown: ShownAttempt & { seq: number } = { seq: event.seq, attempt, summary: summarizing }
      // Unused until a compaction follows: a refused summary leaves none.
      if (summarizing && attempt.failure === undefined) answeredSummary = Object.assign(shown, { unused: true as const })
      part.attempts.push(shown)
      // Only a step's successful attempt produces an answer; the answer is logged right after it.
      pending = attempt.failure === undefined && !summarizing ? { seq: event.seq, attempt } : undefined
    } else if (event.type === 'assistant/message') {
      const data = eventData(event, 'assistant/message')
      const from = data.interrupted ? undefined : pending?.attempt
      part.answers.push({ seq: event.seq, spent: data, ...(from ? { from } : {}) })
      pending = undefined
    }
  }
  close()
  return { answers, attempts }
}

/** `tokens in 100 out 10 · 0.0012`, `~tokens in 40 out 3 (estimated)`, or `no tokens reported`. */
export function spentText(spent: Spent): string {
  if (!spent.usage) return 'no tokens reported'
  const estimated = spent.usageEstimated === true
  const cost = spent.cost !== undefined ? ` · ${formatMoney(spent.cost)}` : ''
  return `${estimated ? '~' : ''}${formatUsage(spent.usage)}${estimated ? ' (estimated)' : ''}${cost}`
}

/** `  · retry 1 failed: STREAM_CLOSED · openai/m1 · tokens in 1,000 out 7 · 0.0010`: an attempt no answer shows. */
export function attemptLine(attempt: Attempt, summary: boolean, unused?: true): string {
  const which = attempt.retry > 0 ? `retry ${attempt.retry}` : 'attempt'
  const what = summary ? `summary request${attempt.retry > 0 ? ` (${which})` : ''}` : which
  const answered = unused ? 'answered, its summary not used (refused: nothing was compacted)' : 'answered'
  const outcome = attempt.failure ? `failed: ${attempt.failure.code}` : summary ? answered : 'succeeded'
  return `  · ${what} ${outcome} · ${attempt.provider}/${attempt.model} · ${spentText(attempt)}`
}

/**
 * `══ session total: 4,304 tok · in 4,260 out 44 · cost 0.0090`, from `spending`, as `rein sessions`
 * counts it; `~` when part is estimated. A fork counts from its fork on.
 */
export function totalLine(events: readonly SessionEvent[], hasChildren: boolean): string {
  const spent = spending(events)
  const estimated = spent.usageEstimated === true
  const counted = tokenCount(spent.usage) > 0
  const cost = spent.cost !== undefined ? ` · cost ${formatMoney(spent.cost)}` : counted ? ' · cost unknown (a model used has no price)' : ''
  const children = hasChildren ? ' (its subagents\' sessions count their own)' : ''
  return `══ session total: ${estimated ? '~' : ''}${groupDigits(tokenCount(spent.usage))} tok · ${formatTokens(spent.usage)}${estimated ? ' (part estimated)' : ''}${cost}${children}`
}

/** `{"type":"totals",…}`: the last line of `rein show --json`, as `rein sessions --json` lists the session. */
export function totalsRecord(events: readonly SessionEvent[]): { type: 'totals' } & ReturnType<typeof spending> {
  return { type: 'totals', ...spending(events) }
}
