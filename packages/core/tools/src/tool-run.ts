/** Builds the frozen `ToolRun` a body receives, with the fields provider packages contribute. */

import type { Fiber, Logger } from '@deepseek-ai/cordis'
import type { ToolRun } from './define-tool.ts'
import type { ToolCall } from './hooks.ts'
import type { OpenSpill, ToolCallContext, ToolRunFields } from './run-context.ts'

/** One provider's field: computed per call, from the call as hooks see it. */
export interface Contribution {
  key: Extract<keyof ToolRunFields, string>
  provide(call: ToolCall): unknown
  logger: Logger
  /** The fiber that contributes it, named when another plugin wants the same key. */
  owner: Fiber
}

/** The fields every run has: no provider may contribute one (a `workspaceRoot` of its own would move the file tools' boundary). */
export const CORE_RUN_FIELDS: ReadonlySet<string> = new Set(['callId', 'signal', 'sessionId', 'cwd', 'workspaceRoot', 'logger', 'identity', 'spill', 'spillFolder'])

/** Anything with an AbortSignal on demand (the dispatcher's lazy signal). */
interface SignalSource {
  readonly signal: AbortSignal
}

/**
 * A class rather than a literal: the signal is a getter so it is made only if the body reads it,
 * and a literal mixing a getter with spreads is slow on a path every call takes.
 */
class Run {
  readonly callId: string
  readonly cwd: string
  readonly workspaceRoot: string
  readonly logger: Logger
  // `declare`: an absent field must be absent, not an own property holding undefined.
  declare readonly sessionId?: string
  declare readonly identity?: ToolCall['identity']
  declare readonly spill?: OpenSpill
  declare readonly spillFolder?: string

  readonly #source: SignalSource

  constructor(call: ToolCall, source: SignalSource, logger: Logger, spill: OpenSpill | undefined, spillFolder: string | undefined) {
    this.#source = source
    this.callId = call.callId
    this.cwd = call.cwd
    this.workspaceRoot = call.workspaceRoot
    this.logger = logger
    if (call.sessionId !== undefined) this.sessionId = call.sessionId
    if (call.identity !== undefined) this.identity = call.identity
    if (spill !== undefined) this.spill = spill
    if (spillFolder !== undefined) this.spillFolder = spillFolder
  }

  get signal(): AbortSignal {
    return this.#source.signal
  }
}

export function buildRun(call: ToolCall, source: SignalSource, logger: Logger, context: ToolCallContext | undefined, contributions: readonly Contribution[]): ToolRun {
  const run = new Run(call, source, logger, context?.spill, context?.spillFolder)
  for (const contribution of contributions) {
    try {
      const value = contribution.provide(call)
      if (value !== undefined) Object.defineProperty(run, contribution.key, { value, enumerable: true })
    } catch (error) {
      // A provider that cannot give its field costs the body that field, never the call.
      contribution.logger.error('tool run field %s could not be made for %s: %s', contribution.key, call.toolName, error)
    }
  }
  return Object.freeze(run)
}
