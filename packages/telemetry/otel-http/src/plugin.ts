/**
 * What loading the plugin does: decide the endpoint, build the SDK pipeline, register one sink on
 * `ctx.telemetry`; and on dispose, take the sink off, end what is open, flush and stop (bounded).
 */

import type { Context, Logger } from '@deepseek-ai/cordis'
import type { TelemetrySink } from '@rein/telemetry'
import { ENDPOINT_ENV, EXPORTER_ENVS, resolveEndpoints, signalWords, type OtelHttpConfig, type Signals } from './config.ts'
import { createFailureLog } from './failures.ts'
import { GenAiMetrics } from './metrics.ts'
import { createPipeline, type Pipeline } from './pipeline.ts'
import { SpanBook } from './spans.ts'

/** The name the sink goes by in `ctx.telemetry`'s log lines. */
export const SINK_NAME = 'otel-http'

/** Registers the sink, or nothing (one info line) when no endpoint is set. */
export function applyOtelHttp(ctx: Context, config: OtelHttpConfig): void {
  const logger = ctx.logger('otel-http')
  const choice = resolveEndpoints(config, process.env)
  if (choice.kind === 'off') {
    // A variable set to something that is no URL was meant to export: say so where the CLI shows it.
    if (choice.misset) logger.warn('OpenTelemetry export is off: %s', choice.reason)
    else logger.info('OpenTelemetry export is off: %s', choice.reason)
    return
  }
  const { endpoints, signals } = choice
  for (const warning of choice.warnings) logger.warn('%s', warning)
  ctx.effect(() => {
    const pipeline = createPipeline(config, endpoints, signals, createFailureLog(logger, endpoints.display))
    // Content lands on spans only: with traces off it is never built.
    const book = new SpanBook(pipeline.tracer, pipeline.meter && new GenAiMetrics(pipeline.meter), config.captureContent && signals.traces)
    const remove = ctx.telemetry.sink(createSink(book, pipeline, logger))
    logger.info('exporting %s to %s (from %s)%s%s', signalWords(signals), endpoints.display, choice.from === 'env' ? ENDPOINT_ENV : 'Config endpoint',
      config.captureContent && signals.traces ? ', with content (captureContent)' : '', offWords(signals))
    return async () => {
      await remove()
      book.endAll(Date.now())
      await pipeline.shutdown()
    }
  }, 'otel-http sink')
}

/** The info line's note of a signal that is off, and which variable turned it off. */
function offWords(signals: Signals): string {
  if (!signals.metrics) return `; metrics are off (${EXPORTER_ENVS.metrics}=none)`
  if (!signals.traces) return `; traces are off (${EXPORTER_ENVS.traces}=none)`
  return ''
}

function createSink(book: SpanBook, pipeline: Pipeline, logger: Logger): TelemetrySink {
  let warned = false
  return {
    name: SINK_NAME,
    emit(record) {
      try {
        book.handle(record)
      } catch (error) {
        // Logged once, and only the error's own words: never the record, which may hold content.
        if (warned) return
        warned = true
        logger.warn('a %s record could not be mapped to a span (%s); later ones are not logged', record.kind, error instanceof Error ? error.message : 'unknown error')
      }
    },
    flush: () => pipeline.flush(),
  }
}
