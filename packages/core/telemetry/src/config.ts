/** The plugin's Config: how long `flush` waits on sinks, and how many ended runs keep their cost. */

import Schema from '@deepseek-ai/schemastery'

/** The Config of `@rein/telemetry` (see the README's Config table). */
export interface TelemetryConfig {
  /** Longest `flush()` waits on one sink's `flush`, in ms; then it gives up on that sink (logged). */
  flushTimeoutMs: number
  /** Ended runs whose cost report stays retrievable with `cost(runId)`; the oldest is dropped first. */
  keepRuns: number
}

/** The Config schema of `@rein/telemetry`. */
export const TelemetryConfig: Schema<Partial<TelemetryConfig>, TelemetryConfig> = Schema.object({
  flushTimeoutMs: Schema.natural().min(1).max(600_000).default(2_000)
    .description('Longest flush() waits on one sink, in ms: the most a process exit waits on a dead exporter.'),
  keepRuns: Schema.natural().min(1).max(1_000_000).default(1_000)
    .description('Ended runs whose cost report cost(runId) still answers; older ones are dropped, oldest first.'),
}) as Schema<Partial<TelemetryConfig>, TelemetryConfig>
