/**
 * One compaction: prune old tool results to stubs; if that does not bring the request under the
 * target, summarize the range before the kept turns (updating an earlier summary, never
 * summarizing it again). The result is one `context/compacted` event, written only once complete.
 */

import type { LlmEvent, LlmRuntime, ModelRoute } from '@rein/llm'
import { applyCompaction, SUMMARY_OPENING, type ContextCompacted, type Session } from '@rein/session'
import type { ToolRegistry, ToolSchema } from '@rein/tools'
import type { CompactionOptions } from '../options.ts'
import { fileLedger } from './ledger.ts'
import { requestTokens, type Tokenizer } from './meter.ts'
import { isSummary, planPrune, summaryRange, tailStart, type Entry } from './plan.ts'
import { writeSummary } from './summarize.ts'

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
  reason: 'auto' | 'manual'
  instructions?: string
  signal: AbortSignal
  /** The summary request's attempts, for the caller to log and count. */
  onEvent: (event: LlmEvent) => void
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
  if (afterPrune > target || input.reason === 'manual') await summarize(input, entries, data)
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
  // Someone asked to shorten the conversation now: only the last turn is kept whole.
  const range = summaryRange(entries, input.reason === 'manual' ? 1 : input.options.keepTurns)
  if (!range) return
  const inRange = entries.slice(range.from, range.to)
  const previous = inRange.find((entry) => isSummary(entry.message))
  const prunedIds = new Set(data.pruned.map((entry) => entry.callId))
  // The transcript reads the freshly pruned results as the model will: as stubs.
  const messages = applyCompaction(inRange.filter((entry) => entry !== previous), { ...data, pruned: data.pruned.filter((entry) => prunedIds.has(entry.callId)) }, 0).map((entry) => entry.message)
  const outcome = await writeSummary({
    llm: input.llm,
    route: input.route,
    ...(previous ? { previous: previousText(previous) } : {}),
    messages,
    ...(input.instructions ? { instructions: input.instructions } : {}),
    maxTokens: input.options.summaryMaxTokens,
    // The transcript gets what the window holds besides the summary's answer and the instructions.
    maxInputTokens: Math.max(500, input.window - input.options.summaryMaxTokens - 500),
    tokens: input.tokens,
    signal: input.signal,
    onEvent: input.onEvent,
  })
  if (!outcome.ok) {
    data.summaryFailed = { code: outcome.code, message: outcome.message }
    return
  }
  const fromSeq = entries[range.from]!.seq
  const toSeq = range.to < entries.length ? entries[range.to]!.seq - 1 : input.session.events.length - 1
  const ledger = fileLedger(input.session.events, toSeq, (name) => input.tools.info(name)?.effects)
  data.summary = { text: `${withoutLedger(outcome.text)}\n\n${ledger}`, fromSeq, toSeq, provider: input.route.provider, model: input.route.model }
}

/** A previous summary's text, without the opening the log adds. */
function previousText(entry: Entry): string {
  const text = entry.message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
  return withoutLedger(text.startsWith(SUMMARY_OPENING) ? text.slice(SUMMARY_OPENING.length).trimStart() : text)
}

/** The ledger is rebuilt from the log each time: a copy the model kept (or an old one) is dropped. */
function withoutLedger(text: string): string {
  const at = text.indexOf('## Files (from the session log)')
  return (at === -1 ? text : text.slice(0, at)).trimEnd()
}
