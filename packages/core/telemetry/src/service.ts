/**
 * The `ctx.telemetry` service: turns the agent's lifecycle events into run-scoped records for the
 * registered sinks, rolls provider usage up the run tree, and carries the run's scope into tool
 * bodies. Nothing is wrapped: it only listens, and does most of its work only while a sink is there.
 */

import { Context, Service, type Logger } from '@deepseek-ai/cordis'
import { ReinError } from '@rein/base'
import type { CompactionEndEvent, CompactionStartEvent, RepairEndEvent, RepairStartEvent, TurnEndEvent, TurnStartEvent } from '@rein/agent'
import type {} from '@rein/tools'
import { TelemetryConfig } from './config.ts'
import { CostLedger } from './ledger.ts'
import { llmEnd, llmStart, runEnd, runStart, stepEnd, stepStart, toolEnd, toolStart } from './records.ts'
import { ScopeCarrier } from './run-scope.ts'
import { SinkSet } from './sinks.ts'
import type { CostReport, RunPurpose, RunScope, TelemetrySink } from './types.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    telemetry: TelemetryService
  }
}

interface TelemetryState {
  /** The service's own context: the listeners belong to it, whoever registered the sink. */
  ctx: Context
  config: TelemetryConfig
  logger: Logger
  sinks: SinkSet
  ledger: CostLedger
  scopes: ScopeCarrier
  /** Removes the listeners only sinks need; undefined while no sink is registered. */
  detach: (() => void) | undefined
  disposed: boolean
}

/** `ctx.telemetry`: one per composition; exporters (`@rein/otel-http`) register sinks on it. */
export class TelemetryService extends Service {
  static readonly Config = TelemetryConfig

  // Methods run on cordis's tracing proxy: the state is one plain object, read once per call.
  private _state: TelemetryState

  constructor(ctx: Context, config: TelemetryConfig) {
    super(ctx, 'telemetry')
    const logger = ctx.logger('telemetry')
    const sinks = new SinkSet(logger)
    const ledger = new CostLedger(config.keepRuns)
    const state: TelemetryState = { ctx, config, logger, sinks, ledger, scopes: new ScopeCarrier(), detach: undefined, disposed: false }
    this._state = state
    // Always, sinks or not: cost(runId) is built from these, and each comes once per run or attempt.
    // A compaction between turns is a run of its own, told as one; so is a repair no turn took.
    const started = (event: TurnStartEvent | CompactionStartEvent | RepairStartEvent, purpose?: RunPurpose) => {
      ledger.start(event.identity)
      if (sinks.size > 0) sinks.emit(runStart(event, purpose))
    }
    const ended = (event: TurnEndEvent | CompactionEndEvent | RepairEndEvent, purpose?: RunPurpose) => {
      const { runId } = event.identity
      // A run first heard from at its end (telemetry loaded mid-run) is learnt here, sink or not.
      ledger.start(event.identity)
      if (sinks.size > 0) sinks.emit(runEnd(event, ledger.report(runId)!, purpose))
      ledger.end(runId)
    }
    ctx.on('agent/turn-start', (event) => started(event))
    ctx.on('agent/compaction-start', (event) => started(event, 'compaction'))
    ctx.on('agent/llm-end', (event) => {
      if (event.usage !== undefined) ledger.add(event.identity, event.usage, event.cost, event.usageEstimated === true)
      // A crash repair's: its run died with the process that ran it, and tells no end here. Ended now,
      // so it is kept (and forgotten) like any ended run, not for the process's life.
      if (event.repaired === true) ledger.end(event.identity.runId)
      if (sinks.size > 0) sinks.emit(llmEnd(event))
    })
    ctx.on('agent/turn-end', (event) => ended(event))
    ctx.on('agent/compaction-end', (event) => ended(event, 'compaction'))
    ctx.on('agent/repair-start', (event) => started(event, 'repair'))
    ctx.on('agent/repair-end', (event) => ended(event, 'repair'))
    ctx.inject(['tools'], (inner) => {
      inner.tools.wrapExecute(state.scopes.wrapper)
    })
    ctx.effect(() => () => {
      state.disposed = true
      sinks.clear()
      state.detach?.()
      state.detach = undefined
      state.scopes.carry(false)
      ledger.clear()
    }, 'telemetry: drop sinks and costs')
  }

  /**
   * Sends every record to `sink` until the returned disposer runs or the caller is disposed.
   * `emit` is called synchronously during the run; what it throws or rejects is logged once per
   * kind and never reaches the run. `INVALID_SINK`, `DUPLICATE_SINK`.
   */
  sink(sink: TelemetrySink): () => Promise<void> {
    if (typeof sink !== 'object' || sink === null || typeof sink.emit !== 'function' || typeof sink.name !== 'string') {
      throw new ReinError('INVALID_SINK', 'a telemetry sink needs a name and an emit function')
    }
    const state = this._state
    return this.ctx.effect(() => {
      if (state.sinks.has(sink)) throw new ReinError('DUPLICATE_SINK', `telemetry sink ${sink.name} is already registered`)
      state.sinks.add(sink)
      if (state.detach === undefined && !state.disposed) {
        state.detach = listenForSinks(state)
        state.scopes.carry(true)
      }
      return () => {
        state.sinks.remove(sink)
        if (state.sinks.size > 0 || state.detach === undefined) return
        state.detach()
        state.detach = undefined
        state.scopes.carry(false)
      }
    }, `telemetry.sink(${sink.name})`)
  }

  /** Calls every sink's `flush`, giving each at most Config `flushTimeoutMs`. Never rejects. */
  async flush(): Promise<void> {
    const { sinks, config, logger } = this._state
    await sinks.flush(config.flushTimeoutMs).catch((error: unknown) => logger.error('telemetry flush failed: %s', error))
  }

  /**
   * The spend of a run: its own provider attempts, its descendants' (each counted once), and both.
   * Undefined for a run this service never saw, or one of more than Config `keepRuns` ended since.
   */
  cost(runId: string): CostReport | undefined {
    return this._state.ledger.report(runId)
  }

  /**
   * The scope of the run whose tool body is running now (and what it awaits), while a sink is
   * registered; undefined elsewhere, and while no sink is (see the README's Limitations).
   */
  scope(): RunScope | undefined {
    return this._state.scopes.current()
  }
}

/** The listeners for events only sinks want; returns what removes them. */
function listenForSinks(state: TelemetryState): () => void {
  const { ctx, sinks } = state
  const off = [
    ctx.on('agent/step-start', (event) => sinks.emit(stepStart(event))),
    ctx.on('agent/step-end', (event) => sinks.emit(stepEnd(event))),
    ctx.on('agent/llm-start', (event) => sinks.emit(llmStart(event))),
    ctx.on('agent/tool-start', (event) => sinks.emit(toolStart(event))),
    ctx.on('agent/tool-end', (event) => sinks.emit(toolEnd(event))),
  ]
  return () => {
    for (const dispose of off) dispose()
  }
}
