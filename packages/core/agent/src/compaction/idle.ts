/**
 * Compaction between turns (`rein compact`, a chat's `/compact`): the next request is estimated
 * from what the log last sent (its system text and tools), and the summary request's attempts are
 * logged and counted on the agent, as a turn's would be. Lifecycle listeners hear it as a run of its
 * own (`agent/compaction-start` … `-end`), so telemetry traces and counts what it spends.
 */

import { ReinError, isReinError } from '@rein/base'
import type { LlmEvent, LlmRuntime, ToolSpec } from '@rein/llm'
import { changesHistory, eventData, type ContextCompacted, type Session, type SessionEvent } from '@rein/session'
import type { RunIdentity, ToolRegistry } from '@rein/tools'
import { Tally } from '../accounting.ts'
import { attemptStarted, logAttempt, type AttemptPlace } from '../attempts.ts'
import type { CompactionEndEvent, Notify } from '../lifecycle.ts'
import type { AgentEvent } from '../events.ts'
import type { AgentOptions } from '../options.ts'
import { compactContext } from './compact.ts'
import type { ContextMeter, Tokenizer } from './meter.ts'
import type { SummaryExchange } from './summarize.ts'

export interface IdleCompaction {
  session: Session
  options: AgentOptions
  llm: LlmRuntime
  tools: ToolRegistry
  tokens: Tokenizer
  meter: ContextMeter
  totals: Tally
  instructions?: string
  signal: AbortSignal
  notify: Notify
  /** The run it is: a fresh run id, numbered with the turn it follows. */
  identity: RunIdentity
  turn: number
  /** Tells the agent's subscribers of the summary request's attempts and retries. */
  emit: (event: AgentEvent) => void
}

/** What it wrote; undefined when there was nothing to prune or summarize. `NO_CONTEXT_WINDOW` for a model with no known window. */
export async function compactIdle(input: IdleCompaction): Promise<ContextCompacted | undefined> {
  const { options, llm } = input
  const route = options.compaction.summaryRoute ?? { provider: options.provider, model: options.model }
  const window = (await llm.modelInfo(options.provider, options.model))?.contextWindow
  if (window === undefined) {
    throw new ReinError('NO_CONTEXT_WINDOW', `${options.provider}/${options.model} has no known context window, so there is nothing to compact against; give it contextWindow in its provider's models`)
  }
  const place: AttemptPlace = { identity: input.identity, turn: input.turn, step: 0 }
  const startedAt = Date.now()
  const spent = new Tally()
  input.notify('agent/compaction-start', () => ({ identity: place.identity, turn: place.turn, startedAt }))
  let end: Pick<CompactionEndEvent, 'reason' | 'errorCode'> = { reason: 'error', errorCode: 'INTERNAL_ERROR' }
  try {
    const data = await compactLog(input, route, window, (event, exchange) => {
      if (event.type === 'attempt-start') return input.notify('agent/llm-start', () => attemptStarted(place, llm, event, exchange.input))
      if (event.type === 'attempt' || event.type === 'retry') input.emit(event)
      if (event.type === 'attempt') {
        const { usage, cost, estimated } = logAttempt(input.session, input.notify, place, llm, event, exchange.input, exchange.output)
        input.totals.add(usage, cost, estimated)
        spent.add(usage, cost, estimated)
      }
    })
    end = { reason: 'completed' }
    return data
  } catch (error) {
    end = input.signal.aborted ? { reason: 'aborted' } : { reason: 'error', errorCode: isReinError(error) ? error.code : 'INTERNAL_ERROR' }
    throw error
  } finally {
    input.notify('agent/compaction-end', () => ({
      identity: place.identity, turn: place.turn, startedAt, endedAt: Date.now(), ...end,
      usage: { ...spent.usage }, ...(spent.cost !== undefined ? { cost: spent.cost } : {}),
    }))
  }
}

type OnAttempt = (event: LlmEvent, exchange: SummaryExchange) => void

/** Prunes and summarizes what the log holds, then flushes: the compaction itself, the attempts included. */
async function compactLog(input: IdleCompaction, route: { provider: string; model: string }, window: number, onEvent: OnAttempt): Promise<ContextCompacted | undefined> {
  const { session } = input
  const system = lastRecorded(session.events, 'system')
  const schemas = (lastRecorded(session.events, 'tools') ?? []) as unknown as ToolSpec[]
  const data = await compactContext({
    session,
    llm: input.llm,
    tools: input.tools,
    route,
    options: input.options.compaction,
    summaryTokens: input.options.compaction.summaryMaxTokens,
    window,
    tokens: input.tokens,
    system: typeof system === 'string' ? system : '',
    schemas,
    // As a turn's compaction counts it: from the provider's last report when there is one.
    before: input.meter.estimate(input.tokens, typeof system === 'string' ? system : '', schemas, session.messages()),
    reason: 'manual',
    ...(input.instructions ? { instructions: input.instructions } : {}),
    signal: input.signal,
    onEvent,
  })
  if (data && changesHistory(data)) input.meter.forget()
  // A failed summary with nothing else to do writes nothing: its attempts are saved all the same.
  await session.flush()
  return data
}

/** The last full system text or tool list a request header recorded. */
function lastRecorded(events: readonly SessionEvent[], field: 'system' | 'tools'): unknown {
  const header = events.findLast((event) => event.type === 'request/header' && eventData(event, 'request/header')[field] !== undefined)
  return header && eventData(header, 'request/header')[field]
}
