/**
 * Compaction between turns (`rein compact`, a chat's `/compact`): the next request is estimated
 * from what the log last sent (its system text and tools), and the summary request's attempts are
 * logged and counted on the agent, as a turn's would be.
 */

import { ReinError } from '@rein/base'
import type { LlmRuntime, ToolSpec } from '@rein/llm'
import { eventData, type ContextCompacted, type Session, type SessionEvent } from '@rein/session'
import type { ToolRegistry } from '@rein/tools'
import type { Tally } from '../accounting.ts'
import { priceOf } from '../attempts.ts'
import type { AgentOptions } from '../options.ts'
import { compactContext } from './compact.ts'
import { requestTokens, type ContextMeter, type Tokenizer } from './meter.ts'

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
}

/** What it wrote; undefined when there was nothing to prune or summarize. `NO_CONTEXT_WINDOW` for a model with no known window. */
export async function compactIdle(input: IdleCompaction): Promise<ContextCompacted | undefined> {
  const { session, options, llm } = input
  const route = options.compaction.summaryRoute ?? { provider: options.provider, model: options.model }
  const window = (await llm.modelInfo(options.provider, options.model))?.contextWindow
  if (window === undefined) {
    throw new ReinError('NO_CONTEXT_WINDOW', `${options.provider}/${options.model} has no known context window, so there is nothing to compact against; give it contextWindow in its provider's models`)
  }
  const system = lastRecorded(session.events, 'system')
  const schemas = (lastRecorded(session.events, 'tools') ?? []) as unknown as ToolSpec[]
  const data = await compactContext({
    session,
    llm,
    tools: input.tools,
    route,
    options: options.compaction,
    window,
    tokens: input.tokens,
    system: typeof system === 'string' ? system : '',
    schemas,
    before: requestTokens(input.tokens, typeof system === 'string' ? system : '', schemas, session.messages()),
    reason: 'manual',
    ...(input.instructions ? { instructions: input.instructions } : {}),
    signal: input.signal,
    onEvent: (event) => {
      if (event.type !== 'attempt') return
      const { type: _type, ...attempt } = event
      const cost = attempt.usage ? priceOf(llm, attempt, attempt.usage) : undefined
      session.append('llm/attempt', { ...attempt, ...(cost !== undefined ? { cost } : {}) }, { ignorable: true })
      if (attempt.usage) input.totals.add(attempt.usage, cost, attempt.usageEstimated === true)
    },
  })
  if (data && (data.pruned.length > 0 || data.summary)) input.meter.forget()
  // A failed summary with nothing else to do writes nothing: its attempts are saved all the same.
  await session.flush()
  return data
}

/** The last full system text or tool list a request header recorded. */
function lastRecorded(events: readonly SessionEvent[], field: 'system' | 'tools'): unknown {
  const header = events.findLast((event) => event.type === 'request/header' && eventData(event, 'request/header')[field] !== undefined)
  return header && eventData(header, 'request/header')[field]
}
