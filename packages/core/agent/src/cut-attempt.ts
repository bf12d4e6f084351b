/**
 * A provider attempt a crash cut off. A step is made durable right before its request is sent, and
 * the attempt's `llm/attempt` record is written only when the attempt ends: a log whose open turn
 * ends in a step that holds neither an attempt nor an answer had a request in flight, which the
 * provider may well have billed. Repair records it as an estimate, so it counts as more than
 * nothing: the input counted from the request the log rebuilds (its system text and tools from the
 * last `request/header`s, its messages), the output it streamed before the kill unknown (0).
 */

import type { LlmRuntime, TokenUsage } from '@rein/llm'
import { eventData, type CoreEventData, type Session, type SessionEvent } from '@rein/session'
import { priceOf } from './attempts.ts'
import { messageTokens, type Tokenizer } from './compaction/meter.ts'

type AttemptData = CoreEventData['llm/attempt']

/** What estimating needs: the tokenizer the context meter counts with, and the catalog for its price. */
export interface AttemptEstimator {
  tokens: Tokenizer
  llm: () => LlmRuntime | undefined
}

/** The `llm/attempt` to write for a request the crash left in flight, or undefined when none was. */
export async function cutOffAttempt(session: Session, estimator: AttemptEstimator): Promise<AttemptData | undefined> {
  const step = unansweredStep(session.events)
  if (!step) return undefined
  const { request } = eventData(step, 'step/start')
  if (!request) return undefined
  const usage: TokenUsage = { inputTokens: inputTokens(session, estimator.tokens), outputTokens: 0 }
  const cost = await costOf(estimator.llm(), request, usage)
  // When it ended is not known either: it is dated from its step, and lasted nothing.
  const at = Date.parse(step.time)
  return {
    provider: request.provider,
    model: request.model,
    retry: 0,
    fallback: 0,
    startedAt: at,
    endedAt: at,
    shown: false,
    failure: { code: 'ABORTED', message: 'rein was killed while this request was answered: its input tokens are estimated from the request, the output it had streamed is not known' },
    usage,
    usageEstimated: true,
    ...(request.maxTokens !== undefined ? { maxTokens: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.reasoningEffort !== undefined ? { reasoningEffort: request.reasoningEffort } : {}),
    ...(cost !== undefined ? { cost } : {}),
  }
}

/** The open turn's last step, when it is open and holds no attempt or answer yet. */
function unansweredStep(events: readonly SessionEvent[]): SessionEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const { type } = events[i]!
    if (type === 'step/start') return events[i]
    // Anything that ends or answers the step (or the turn) before it: nothing was in flight.
    if (type === 'llm/attempt' || type === 'assistant/message' || type === 'step/end' || type === 'turn/end' || type === 'turn/start') return undefined
  }
  return undefined
}

/** The request's input as the context meter would count it: system text, tool schemas, messages. */
function inputTokens(session: Session, tokens: Tokenizer): number {
  const { events } = session
  const system = events.findLast((event) => event.type === 'request/header' && eventData(event, 'request/header').system !== undefined)
  const tools = events.findLast((event) => event.type === 'request/header' && eventData(event, 'request/header').tools !== undefined)
  const systemText = system ? eventData(system, 'request/header').system! : ''
  const toolList = tools ? eventData(tools, 'request/header').tools : undefined
  return tokens(systemText) + (Array.isArray(toolList) && toolList.length > 0 ? tokens(JSON.stringify(toolList)) : 0) + messageTokens(tokens, session.messages())
}

/** Its price; undefined when the model is unpriced or its catalog cannot be had. */
async function costOf(llm: LlmRuntime | undefined, route: { provider: string; model: string }, usage: TokenUsage): Promise<number | undefined> {
  if (!llm) return undefined
  // A resume has looked its routes up already; closing a lost child has not.
  await llm.modelInfo(route.provider, route.model).catch(() => undefined)
  return priceOf(llm, route, usage)
}
