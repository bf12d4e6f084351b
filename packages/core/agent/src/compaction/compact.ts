/**
 * One compaction: prune old tool results to stubs; if that does not bring the request under the
 * target, summarize the range before the kept turns (updating an earlier summary, never
 * summarizing it again). The result is one `context/compacted` event, written only once complete.
 */

import { ReinError } from '@rein/base'
import type { LlmEvent, LlmRuntime, ModelRoute } from '@rein/llm'
import { applyCompaction, SUMMARY_OPENING, type ContextCompacted, type Session } from '@rein/session'
import type { ToolRegistry, ToolSchema } from '@rein/tools'
import type { CompactionOptions } from '../options.ts'
import { fileLedger, LEDGER_HEADING } from './ledger.ts'
import { requestTokens, type Tokenizer } from './meter.ts'
import { deepen, isCut, isSummary, planPrune, summaryRange, tailStart, type Entry } from './plan.ts'
import { summaryOverhead, transcriptLine, writeSummary, type SummaryExchange } from './summarize.ts'

export interface CompactionInput {
  session: Session
  llm: LlmRuntime
  tools: ToolRegistry
  /** The route that writes the summary. */
  route: ModelRoute
  options: CompactionOptions
  window: number
  tokens: Tokenizer
  system: string
  schemas: readonly ToolSchema[]
  /** The request's estimated tokens now. */
  before: number
  reason: 'auto' | 'manual' | 'overflow'
  instructions?: string
  signal: AbortSignal
  /** The summary request's attempts, for the caller to log and count, with what each asked. */
  onEvent: (event: LlmEvent, exchange: SummaryExchange) => void
}

/**
 * Writes the compaction and returns it — unwritten when it changed nothing (a summary that failed
 * with nothing to prune); undefined when there was nothing to prune or summarize at all.
 */
export async function compactContext(input: CompactionInput): Promise<ContextCompacted | undefined> {
  const { session, options, window, tokens } = input
  const entries = session.messageEntries()
  const keepTool = Math.min(options.keepToolTokens, Math.floor(window / 4))
  const target = options.target * window
  let pruned = planPrune(entries, tailStart(entries, options.keepTurns), keepTool, tokens)
  let afterPrune = input.before - saved(pruned)
  // The kept turns alone hold too much tool output (one long turn): only the most recent is kept whole.
  if (afterPrune > target) {
    pruned = planPrune(entries, entries.length, keepTool, tokens)
    afterPrune = input.before - saved(pruned)
  }
  const data: ContextCompacted = {
    reason: input.reason,
    ...(input.instructions ? { instructions: input.instructions } : {}),
    tokensBefore: input.before,
    tokensAfter: afterPrune,
    pruned: pruned.map(({ callId, name, chars }) => ({ callId, name, chars })),
  }
  // Asked for, or refused by the provider as too long: the estimate cannot be trusted to stop short.
  if (afterPrune > target || input.reason !== 'auto') await summarize(input, entries, data)
  // Stopped meanwhile (a cancel, a shutdown): nothing is written, the history stays as it was.
  if (input.signal.aborted) throw new ReinError('ABORTED', 'the compaction was stopped before it finished; nothing was changed')
  if (data.pruned.length === 0 && !data.summary) return data.summaryFailed ? data : undefined
  // What the next request will be, computed the way the log will derive it.
  const after = applyCompaction(entries, data, session.events.length).map((entry) => entry.message)
  data.tokensAfter = requestTokens(tokens, input.system, input.schemas, after)
  session.append('context/compacted', data)
  await session.flush()
  return data
}

function saved(pruned: readonly { saves: number }[]): number {
  return pruned.reduce((sum, entry) => sum + entry.saves, 0)
}

/** Adds the summary to `data`, or why there is none; a range that would split a call is never chosen. */
async function summarize(input: CompactionInput, entries: readonly Entry[], data: ContextCompacted): Promise<void> {
  const { options, tokens } = input
  // Someone asked to shorten the conversation now: only the last turn is kept whole.
  const range = summaryRange(entries, input.reason === 'manual' ? 1 : options.keepTurns)
  if (!range) return
  const previousEntry = entries[range.from] && isSummary(entries[range.from]!.message) ? entries[range.from] : undefined
  const previous = previousEntry && previousText(previousEntry)
  // The transcript reads the freshly pruned results as the model will: as stubs.
  const seen = applyCompaction(entries, data, 0)
  // A kept tail that alone fills much of the target is cut deeper, so the next compaction is not at the next step.
  const deeper = deepen(seen, range.to, (options.target * input.window) / 2, tokens)
  // What the summary request can read besides its answer and instructions: the range ends earlier if need be.
  const window = input.llm.resolveModel(input.route.provider, input.route.model)?.contextWindow ?? input.window
  const budget = window - options.summaryMaxTokens - summaryOverhead(tokens, previous, input.instructions)
  const to = fitting(seen, range.from + (previousEntry ? 1 : 0), deeper, budget, tokens)
  if (to <= range.from + (previousEntry ? 1 : 0)) {
    data.summaryFailed = { code: 'SUMMARY_TOO_BIG', message: `the first message to summarize alone is more than the ${budget} tokens the summary request can read` }
    return
  }
  const outcome = await writeSummary({
    llm: input.llm,
    route: input.route,
    ...(previous ? { previous } : {}),
    messages: seen.slice(range.from + (previousEntry ? 1 : 0), to).map((entry) => entry.message),
    ...(input.instructions ? { instructions: input.instructions } : {}),
    maxTokens: options.summaryMaxTokens,
    tokens,
    signal: input.signal,
    onEvent: input.onEvent,
  })
  if (!outcome.ok) {
    data.summaryFailed = { code: outcome.code, message: outcome.message }
    return
  }
  const fromSeq = entries[range.from]!.seq
  const toSeq = to < entries.length ? entries[to]!.seq - 1 : input.session.events.length - 1
  // The ledger stays a small part of the window: about 1/32 of it.
  const ledger = fileLedger(input.session.events, toSeq, (name) => input.tools.info(name)?.effects, Math.max(800, input.window / 8))
  data.summary = { text: `${withoutLedger(outcome.text)}\n\n${ledger}`, fromSeq, toSeq, provider: input.route.provider, model: input.route.model }
}

/** The latest cut at or before `to` whose transcript from `from` fits in `budget` tokens. */
function fitting(entries: readonly Entry[], from: number, to: number, budget: number, tokens: Tokenizer): number {
  let used = 0
  let best = from
  for (let index = from; index < to; index++) {
    if (index > from && isCut(entries, index)) best = index
    used += tokens(transcriptLine(entries[index]!.message)) + 2
    if (used > budget) return best
  }
  return to
}

/** A previous summary's text, without the opening the log adds. */
function previousText(entry: Entry): string {
  const text = entry.message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
  return withoutLedger(text.startsWith(SUMMARY_OPENING) ? text.slice(SUMMARY_OPENING.length).trimStart() : text)
}

/** The ledger is rebuilt from the log each time: a copy the model kept (or an old one) is dropped. */
function withoutLedger(text: string): string {
  const at = text.indexOf(LEDGER_HEADING)
  return (at === -1 ? text : text.slice(0, at)).trimEnd()
}
