/**
 * @rein/telemetry: the `ctx.telemetry` service — run-scoped records built from the agent's
 * lifecycle events for sinks (exporters), the run's scope in tool bodies, and cost rolled up from
 * subagents exactly once.
 */

import { TelemetryService } from './service.ts'

/** The plugin: `ctx.telemetry`, loaded with `name: '@rein/telemetry'`. */
export default TelemetryService
/** The `ctx.telemetry` service class (the default export), for typing and `ctx.plugin`. */
export { TelemetryService } from './service.ts'
/** The plugin's Config schema and type (see the README's Config table). */
export { TelemetryConfig } from './config.ts'
/** The scope of the run an identity names, as records carry it (the same object for the same identity). */
export { scopeOf } from './run-scope.ts'
/** Who a record belongs to: one run of one agent, placed in its tree. */
export type { RunScope } from './types.ts'
/** Tokens and money over some provider attempts; `money` absent when unknown. */
export type { Spend } from './types.ts'
/** A run's spend: `own`, `children` (each descendant once) and `total`. */
export type { CostReport } from './types.ts'
/** Records of a run's start and end (the end carries its cost). */
export type { RunStartRecord, RunEndRecord } from './types.ts'
/** What a run was when not a turn: `compaction` or `repair`. */
export type { RunPurpose } from './types.ts'
/** Records of a step's start and end. */
export type { StepStartRecord, StepEndRecord } from './types.ts'
/** Records of one provider attempt's start and end, and what a content opt-in reads of it. */
export type { LlmCallStartRecord, LlmCallEndRecord, LlmInputContent } from './types.ts'
/** Records of one tool call's start and end. */
export type { ToolCallStartRecord, ToolCallEndRecord } from './types.ts'
/** Every record a sink may get, a union on `kind` and `phase`. */
export type { TelemetryRecord } from './types.ts'
/** Where records go: `name`, `emit(record)` (must not block), optional `flush()`. */
export type { TelemetrySink } from './types.ts'
