/**
 * @rein/otel-http: a `ctx.telemetry` sink that exports runs as OpenTelemetry GenAI spans and metrics
 * (semantic conventions v1.41) over OTLP/HTTP JSON, with content only when Config opts in.
 */

import type { Context } from '@deepseek-ai/cordis'
import { OtelHttpConfig } from './config.ts'
import { applyOtelHttp } from './plugin.ts'

/** The plugin's name in logs and fibers. */
export const name = 'otel-http'
/** Needs `ctx.telemetry` (@rein/telemetry): the plugin is one of its sinks. */
export const inject = ['telemetry']

/** The plugin's Config type (see the README's Config table). */
export type Config = OtelHttpConfig
/** The plugin's Config schema: endpoint, headers, serviceName, resource, captureContent, flushTimeoutMs. */
export const Config = OtelHttpConfig

/** Registers the sink while the plugin is loaded; with no endpoint set, logs one info line and does nothing. */
export const apply = (ctx: Context, config: Config) => {
  applyOtelHttp(ctx, config)
}

/** The Config schema and type under their own name, for compositions that build it in code. */
export { OtelHttpConfig, type ResourceValue } from './config.ts'
/** `OTEL_EXPORTER_OTLP_ENDPOINT`: the variable read when Config has no endpoint. */
export { ENDPOINT_ENV } from './config.ts'
/** The sink's name in `ctx.telemetry`'s log lines. */
export { SINK_NAME } from './plugin.ts'
/** The longest attribute value exported, in characters: longer content is cut. */
export { MAX_ATTRIBUTE_CHARS } from './open-span.ts'
/** Every span name, attribute key, metric name and bucket boundary this package writes. */
export { ATTR, REIN, METRIC, OPERATION, spanName, TOKEN_BUCKETS, DURATION_BUCKETS } from './semconv.ts'
