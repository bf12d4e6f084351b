/**
 * Compaction at the step boundary: measure the request about to be sent against the model's
 * window and, past the threshold (or when asked), compact before sending — never at the limit.
 */

import { groupDigits, ReinError } from '@rein/base'
import type { LlmRuntime, ModelRoute } from '@rein/llm'
import { changesHistory } from '@rein/session'
import type { ToolRegistry, ToolSchema } from '@rein/tools'
import { attemptStarted, recordAttempt } from '../attempts.ts'
import { overBudget, planRequest } from '../budget.ts'
import { parentSpent, spentByTree } from '../tree-budget.ts'
import type { TurnContext } from '../turn.ts'
import type { TurnState } from '../turn-state.ts'
import type { AgentOptions, CompactionOptions } from '../options.ts'
import { compactContext, reserveOf, tightToolTokens, triggerOf, type SummaryBudget } from './compact.ts'
import { requestTokens, type Tokenizer } from './meter.ts'
import type { RecallRoom } from './recall-tool.ts'

/** A compaction asked for before the next request: by someone (`manual`), or by the provider refusing a request as too long. */
export interface CompactionAsked {
  reason: 'manual' | 'overflow'
  instructions?: string
}

/** The request about to be sent, as far as compaction needs it. */
export interface NextRequest {
  llm: LlmRuntime
  tools: ToolRegistry
  route: ModelRoute
  system: string
  schemas: readonly ToolSchema[]
}

/** True when a compaction was written (the messages, and the tools offered, may have changed). */
export async function compactBeforeRequest(context: TurnContext, state: TurnState, next: NextRequest): Promise<boolean> {
  const { options, session, services } = context
  const settings = options.compaction
  const asked = context.compaction.take()
  const window = next.llm.resolveModel(next.route.provider, next.route.model)?.contextWindow
  const tokens = services.tokens()
  const before = context.compaction.meter.estimate(tokens, next.system, next.schemas, session.messages())
  if (window === undefined) {
    context.emit({ type: 'context', tokens: before })
    if (settings.mode !== 'off' || asked) services.warnOnce(`${next.route.provider}/${next.route.model}`, `compaction is off for ${next.route.provider}/${next.route.model}: its context window is not known (give it contextWindow in its provider's models)`)
    return false
  }
  const trigger = triggerOf(settings, window)
  const limit = asked ? window - reserveOf(settings, window) : trigger
  if (!asked && (settings.mode !== 'auto' || before <= trigger)) {
    context.emit({ type: 'context', tokens: before, window })
    return false
  }
  const data = await compactContext({
    session,
    llm: next.llm,
    tools: next.tools,
    route: settings.summaryRoute ?? next.route,
    options: settings,
    ...summaryBudget(context, state, next.llm),
    budget: () => summaryBudget(context, state, next.llm),
    window,
    tokens,
    system: next.system,
    schemas: next.schemas,
    before,
    mustFit: limit,
    reason: asked?.reason ?? 'auto',
    ...(asked?.instructions ? { instructions: asked.instructions } : {}),
    signal: context.signal,
    // The summary request's attempts are the turn's, as a step's are: logged, counted, heard by listeners.
    onEvent: (event, { input, output }) => {
      if (event.type === 'attempt-start') return context.services.notify('agent/llm-start', () => attemptStarted(state, next.llm, event, input))
      // Said as a step's are: a summary retried for a while is not a turn that hangs.
      if (event.type === 'attempt' || event.type === 'retry') context.emit(event)
      if (event.type === 'attempt') recordAttempt(context, state, next.llm, event, input, output)
    },
  })
  if (data) {
    if (changesHistory(data)) context.compaction.meter.forget()
    context.emit({
      type: 'compacted', reason: data.reason, pruned: data.pruned.length, prunedArguments: data.prunedArguments?.length ?? 0, summarized: data.summary !== undefined,
      ...(data.summaryFailed ? { summaryFailed: data.summaryFailed } : {}), tokensBefore: data.tokensBefore, tokensAfter: data.tokensAfter,
    })
  }
  const after = data?.tokensAfter ?? before
  // What the request about to be sent holds: after the compaction.
  context.emit({ type: 'context', tokens: after, window })
  // Still past the threshold: another compaction next step would only repeat this one.
  if (after > limit) {
    const details = { tokens: after, window, trigger: Math.floor(trigger) }
    // No compaction can help a request whose fixed part fills the window: saying "shorter messages" would mislead.
    const fixed = requestTokens(tokens, next.system, next.schemas, [])
    if (fixed > trigger) throw new ReinError('CONTEXT_FULL', `the system prompt and the tool definitions alone are about ${groupDigits(fixed)} tokens, past the ${Math.floor(trigger)} a ${window}-token window allows with room for the answer; use a model with a larger window, or a shorter system prompt and fewer tools`, { details })
    const failed = data?.summaryFailed
    const why = failed ? ` (the summary failed: ${failed.code}: ${failed.message})` : data ? '' : ' (nothing could be pruned or summarized: what is left is the first message and the last turns)'
    // The summary can be asked again later (`compactNow`, rein compact): the conversation is not lost.
    // One the turn's budget kept from being sent needs budget, not a route that answers.
    const retry = failed === undefined ? '' : retryAdvice(failed.code)
    throw new ReinError('CONTEXT_FULL', `the request is about ${after} tokens after compaction${why}, ${pastWhat(settings, window, after)}${retry}`, { details })
  }
  return data !== undefined && changesHistory(data)
}

/**
 * Which limit a request still too big after compaction passes, and what to change. The window may
 * hold it while compaction.threshold does not: then raising the threshold lets the turn go on.
 */
function pastWhat(settings: CompactionOptions, window: number, tokens: number): string {
  const trigger = Math.floor(triggerOf(settings, window))
  const room = window - reserveOf(settings, window)
  if (tokens > room) return `past the ${trigger} a ${window}-token window allows with room for the answer; start a new session, or send shorter messages`
  return `past the ${trigger} tokens compaction.threshold (${settings.threshold}) allows of a ${window}-token window, which itself has room for it; raise compaction.threshold, start a new session, or send shorter messages`
}

/**
 * How to get the summary a compaction could not make: budget for one the turn's budget kept from
 * being sent, another model for one whose answer (or window) could not serve, else the route again.
 */
function retryAdvice(code: string): string {
  if (BUDGET_CODES.has(code)) return '; or give the turn a larger budget, or compact outside a turn, where no turn budget applies'
  // SUMMARY_TOO_BIG, SUMMARY_TOO_LONG, SUMMARY_EMPTY, SUMMARY_NOT_SHORTER: the route answered, or had no room to be asked.
  if (code.startsWith('SUMMARY_') && code !== 'SUMMARY_FAILED') return '; or set compaction.summaryRoute to another model, one that can summarize this conversation (the failure says why this one could not)'
  return '; or compact again once the summary route answers, which frees the room a summary would'
}

/** The codes of a summary a budget kept from being sent (`summaryBudget`). */
const BUDGET_CODES: ReadonlySet<string> = new Set(['MAX_OUTPUT_TOKENS', 'MAX_COST', 'MAX_COST_UNPRICED', 'MAX_STEPS'])

/** The least output a summary is worth asking for: the smallest `summaryMaxTokens` the config takes. */
const MIN_SUMMARY_TOKENS = 256

/**
 * The summary request's output budget inside a turn: like every request of the turn, no more than
 * its budgets (and a subagent's parent's) have left; none at all when that is too little for a summary.
 */
function summaryBudget(context: TurnContext, state: TurnState, llm: LlmRuntime): SummaryBudget {
  const { options } = context
  const most = options.compaction.summaryMaxTokens
  const spent = spentByTree(state.tally, context.tree)
  const above = context.parentLeft?.()
  // Subagents may have spent what was left while the last step's tools ran.
  const over = overBudget(options, spent) ?? parentSpent(above)
  if (over) return { summaryTokens: most, summaryBlocked: over }
  const { cap, capByParent } = planRequest(options, llm, spent, above)
  if (cap === undefined || cap >= most) return { summaryTokens: most }
  if (cap >= MIN_SUMMARY_TOKENS) return { summaryTokens: cap }
  const whose = capByParent ? 'its parent\'s turn has' : 'the turn has'
  return { summaryTokens: cap, summaryBlocked: { code: 'MAX_OUTPUT_TOKENS', message: `no summary request was sent: ${whose} ${cap} output tokens left (maxOutputTokens), fewer than the ${MIN_SUMMARY_TOKENS} a summary needs` } }
}

/**
 * How much of a recalled result the context of `options`' model keeps: a result past the threshold
 * alone would be pruned again before the next request, so it is shown in parts of what a compaction
 * keeps of the latest tool output when the request must shrink to go on (`tightToolTokens`: no
 * more than the target, so a part is not pruned again by a low threshold), nor past the threshold. None when the model's window is not known, or when compaction is not `auto`: nothing then
 * prunes a result at the threshold, and one shown in parts would only cost the model more steps.
 * The window is that of `options`' route, the one `compactBeforeRequest` measures every request of
 * a turn against (a fallback's request too).
 */
export function recallRoom(options: AgentOptions, llm: LlmRuntime, tokens: Tokenizer): RecallRoom | undefined {
  const settings = options.compaction
  if (settings.mode !== 'auto') return undefined
  const window = llm.resolveModel(options.provider, options.model)?.contextWindow
  if (window === undefined) return undefined
  const whole = triggerOf(settings, window)
  return { tokens, whole, part: Math.min(tightToolTokens(settings, window), Math.floor(whole)) }
}
