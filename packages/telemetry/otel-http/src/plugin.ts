/**
 * What loading the plugin does: decide the endpoint, build the SDK pipeline, register one sink on
 * `ctx.telemetry`; and on dispose, take the sink off, end what is open, flush and stop (bounded).
 */

import type { Context, Logger } from '@deepseek-ai/cordis'
import { maskText, urlSecrets } from '@rein/base'
import type { TelemetrySink } from '@rein/telemetry'
import { resolveEndpoints, signalWords, type Endpoints, type OtelHttpConfig, type SignalOff, type Signals } from './config.ts'
import { createFailureLog, type FailureEndpoints } from './failures.ts'
import { GenAiMetrics } from './metrics.ts'
import { createPipeline, type Pipeline } from './pipeline.ts'
import { contentMasker, type Masker } from './secrets.ts'
import { traceSettings } from './trace-settings.ts'
import { SpanBook } from './spans.ts'

/** The name the sink goes by in `ctx.telemetry`'s log lines. */
export const SINK_NAME = 'otel-http'

/** Registers the sink, or nothing (one info line, or a warning for a misset variable) when no signal has an endpoint. */
export function applyOtelHttp(ctx: Context, config: OtelHttpConfig): void {
  const logger = ctx.logger('otel-http')
  const choice = resolveEndpoints(config, process.env)
  for (const warning of choice.warnings) logger.warn('%s', warning)
  if (choice.kind === 'off') {
    // A variable set to something that is no URL was meant to export: say so where the CLI shows it.
    if (choice.misset) logger.warn('OpenTelemetry export is off: %s', choice.reason)
    else logger.info('OpenTelemetry export is off: %s', choice.reason)
    return
  }
  const { endpoints, signals } = choice
  for (const off of choice.off) if (off.why === 'misset') logger.warn('OpenTelemetry export of %s is off: %s', off.signal, off.reason)
  // Read only for traces that go: with traces off, nothing about spans is worth a warning.
  const settings = traceSettings(signals.traces ? process.env : {})
  for (const warning of settings.warnings) logger.warn('%s', warning)
  // Content may quote a key; what a collector gets of it is masked (built once: the environment is read here).
  const mask = config.captureContent ? contentMasker(process.env, config.headers) : undefined
  ctx.effect(() => {
    const pipeline = createPipeline(config, endpoints, settings, mask, createFailureLog(logger, failureEndpoints(endpoints), lineMasker(config.headers, mask, endpoints)))
    // Content's attributes land on spans (with traces off they are never built); the resource, on
    // metrics too, holds the command line, which may carry the prompt (see createResource).
    const book = new SpanBook(pipeline.spans, pipeline.meter && new GenAiMetrics(pipeline.meter), config.captureContent && signals.traces ? mask : undefined)
    const remove = ctx.telemetry.sink(createSink(book, pipeline, logger))
    logger.info('exporting %s%s%s', destinationWords(endpoints, signals), config.captureContent ? ', with content (captureContent)' : '', offWords(choice.off))
    return async () => {
      await remove()
      book.endAll(Date.now())
      await pipeline.shutdown()
    }
  }, 'otel-http sink')
}

/** Where the info line says each signal goes: `traces and metrics to <base> (from …)` when they share it, else each on its own. */
function destinationWords(endpoints: Endpoints, signals: Signals): string {
  const { traces, metrics } = endpoints
  if (traces && metrics && (traces.display !== metrics.display || traces.from !== metrics.from)) {
    return `traces to ${traces.display} (from ${traces.from}) and metrics to ${metrics.display} (from ${metrics.from})`
  }
  const shown = (traces ?? metrics)!
  return `${signalWords(signals)} to ${shown.display} (from ${shown.from})`
}

/** The info line's note of the signal that is off, and why (its exporter variable, no endpoint, a bad one). */
function offWords(off: readonly SignalOff[]): string {
  return off.map((each) => `; ${each.signal} are off (${each.reason})`).join('')
}

/** The URL each failure line names: a signal that is off never fails, so its entry is never read. */
function failureEndpoints(endpoints: Endpoints): FailureEndpoints {
  const either = endpoints.traces?.display ?? endpoints.metrics?.display ?? ''
  const { metrics } = endpoints
  return { traces: endpoints.traces?.display ?? either, metrics: metrics?.display ?? either, ...(metrics?.asGiven ? { metricsVariable: metrics.from } : {}) }
}

/**
 * What masks a failure line: a collector's reason phrase or error may quote the key it refused, or
 * the path and query it was sent (`no route /key/<k>?sig=…`). The content masker when there is one,
 * else one built at the first failure, so a run that exports without one never reads the
 * environment for it; then what the endpoints' URLs as shown hide (keys in their paths, every query value).
 */
function lineMasker(headers: Readonly<Record<string, string>>, content: Masker | undefined, endpoints: Endpoints): Masker {
  let mask = content
  const inUrls = [...new Set([endpoints.traces, endpoints.metrics].flatMap((target) => (target && URL.canParse(target.url) ? urlSecrets(new URL(target.url)) : [])))]
  inUrls.sort((a, b) => b.length - a.length)
  return (text) => (mask ??= contentMasker(process.env, headers))(maskText(text, inUrls))
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
