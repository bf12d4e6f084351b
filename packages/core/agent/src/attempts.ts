/**
 * Provider attempts as the turn sees them: each one logged and counted once, and told to lifecycle
 * listeners with the server behind its route.
 */

import type { ContentBlock, LlmEvent, LlmRuntime, ModelRoute, TokenUsage } from '@rein/llm'
import type { RunIdentity } from '@rein/tools'
import type { Session } from '@rein/session'
import type { LlmAttemptEndEvent, LlmAttemptInput, LlmAttemptStartEvent, Notify } from './lifecycle.ts'
import type { TurnContext } from './turn.ts'
import type { TurnState } from './turn-state.ts'

/** Where an attempt happens: a turn's step, or (step 0) a compaction between turns. */
export interface AttemptPlace {
  readonly identity: RunIdentity
  readonly turn: number
  readonly step: number | undefined
}

type AttemptStart = Extract<LlmEvent, { type: 'attempt-start' }> | Omit<Extract<LlmEvent, { type: 'attempt' }>, 'type'>
type AttemptEnd = Omit<Extract<LlmEvent, { type: 'attempt' }>, 'type'>

/** What an attempt spent, once logged: usage (none when the provider reported none and nothing was estimated), money, and whether it is an estimate. */
export interface AttemptSpend {
  usage: TokenUsage | undefined
  cost: number | undefined
  estimated: boolean
}

/**
 * Logs one attempt (`llm/attempt`, ignorable: the model never sees it, so a rein that predates the
 * record can still load the log) and tells lifecycle listeners; returns what it spent, to count.
 */
export function logAttempt(session: Session, notify: Notify, place: AttemptPlace, llm: LlmRuntime, event: Extract<LlmEvent, { type: 'attempt' }>, input: LlmAttemptInput, output: () => readonly ContentBlock[]): AttemptSpend {
  const { type: _type, ...attempt } = event
  const cost = attempt.usage ? priceOf(llm, attempt, attempt.usage) : undefined
  session.append('llm/attempt', { ...attempt, ...(cost !== undefined ? { cost } : {}) }, { ignorable: true })
  notify('agent/llm-end', () => attemptEnded(place, llm, attempt, input, output, cost))
  return { usage: attempt.usage, cost, estimated: attempt.usageEstimated === true }
}

/** Every attempt, failed and aborted ones included, is logged once and counted once. */
export function recordAttempt(context: TurnContext, state: TurnState, llm: LlmRuntime, event: Extract<LlmEvent, { type: 'attempt' }>, input: LlmAttemptInput, output: () => readonly ContentBlock[]) {
  const { usage, cost, estimated } = logAttempt(context.session, context.services.notify, state, llm, event, input, output)
  if (!usage) return
  state.tally.add(usage, cost, estimated)
  context.totals.add(usage, cost, estimated)
  context.charge?.({ usage, cost, estimated })
  const { totals } = context
  context.emit({
    type: 'usage',
    usage,
    ...(cost !== undefined ? { cost } : {}),
    ...(estimated ? { estimated: true as const } : {}),
    total: totals.usage,
    ...(totals.cost !== undefined ? { totalCost: totals.cost } : {}),
    finish: event.finishReason ?? 'error',
  })
}

/** An attempt as lifecycle listeners see it: the route, and the server behind it in the GenAI conventions' terms. */
export function attemptStarted(place: AttemptPlace, llm: LlmRuntime | undefined, attempt: AttemptStart, input: LlmAttemptInput): LlmAttemptStartEvent {
  // Undefined only for a repair that closes a log with no llm service loaded.
  const endpoint = llm?.endpoint(attempt.provider)
  const server = serverOf(endpoint?.baseURL)
  return {
    identity: place.identity,
    turn: place.turn,
    step: place.step ?? 0,
    route: attempt.provider,
    providerName: endpoint?.providerName ?? attempt.provider,
    ...server,
    requestModel: attempt.model,
    ...(attempt.maxTokens !== undefined ? { maxTokens: attempt.maxTokens } : {}),
    ...(attempt.temperature !== undefined ? { temperature: attempt.temperature } : {}),
    ...(attempt.reasoningEffort !== undefined ? { reasoningEffort: attempt.reasoningEffort } : {}),
    retry: attempt.retry,
    fallback: attempt.fallback,
    startedAt: attempt.startedAt,
    input,
  }
}

/**
 * The attempt a crash cut off, as lifecycle listeners see it once repair recorded it: `repaired`, its
 * usage the repair's estimate, lasting nothing (its duration is not known), with no `agent/llm-start`
 * before it — its start was the killed process's.
 */
export function repairedAttemptEnded(place: AttemptPlace, llm: LlmRuntime | undefined, record: AttemptEnd & { cost?: number }, input: LlmAttemptInput): LlmAttemptEndEvent {
  return Object.assign(attemptEnded(place, llm, record, input, () => [], record.cost), { repaired: true as const })
}

/** A finished attempt as lifecycle listeners see it; `output` is read only when it succeeded. */
function attemptEnded(place: AttemptPlace, llm: LlmRuntime | undefined, attempt: AttemptEnd, input: LlmAttemptInput, output: () => readonly ContentBlock[], cost: number | undefined): LlmAttemptEndEvent {
  // Object.assign onto the start: not a spread-first literal, slow on Node 20 (docs/architecture.md, Conventions).
  return Object.assign(attemptStarted(place, llm, attempt, input), {
    endedAt: attempt.endedAt,
    ...(attempt.responseId !== undefined ? { responseId: attempt.responseId } : {}),
    ...(attempt.responseModel !== undefined ? { responseModel: attempt.responseModel } : {}),
    ...(attempt.finishReason !== undefined ? { finishReason: attempt.finishReason } : {}),
    ...(attempt.usage ? { usage: attempt.usage } : {}),
    ...(attempt.usageEstimated ? { usageEstimated: true as const } : {}),
    ...(attempt.reportedUsage !== undefined ? { reportedUsage: attempt.reportedUsage } : {}),
    ...(cost !== undefined ? { cost } : {}),
    ...(attempt.failure ? { errorCode: attempt.failure.code } : { output }),
  })
}

type Server = { serverAddress?: string; serverPort?: number }

/** The last base URL's server: a turn asks for the same one on every attempt, and parsing a URL costs. */
let lastServer: { baseURL: string; server: Server } | undefined

/** `server.address` and `server.port` of a base URL (the scheme's default port when none is written). */
function serverOf(baseURL: string | undefined): Server {
  if (!baseURL) return {}
  if (lastServer?.baseURL === baseURL) return lastServer.server
  const server = parseServer(baseURL)
  lastServer = { baseURL, server }
  return server
}

function parseServer(baseURL: string): Server {
  try {
    const url = new URL(baseURL)
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : url.protocol === 'http:' ? 80 : undefined
    return { serverAddress: url.hostname, ...(port !== undefined ? { serverPort: port } : {}) }
  } catch {
    return {}
  }
}

/** Money for `usage` on a route, or undefined when unpriced — or when the catalog itself fails. */
export function priceOf(llm: LlmRuntime, route: ModelRoute, usage: TokenUsage): number | undefined {
  try {
    return llm.costOf(route.provider, route.model, usage)
  } catch {
    return undefined
  }
}

