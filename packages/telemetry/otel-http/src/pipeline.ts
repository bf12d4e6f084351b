/**
 * The OpenTelemetry SDK objects behind the sink: a batch span processor sending spans to the OTLP/HTTP
 * JSON trace exporter, a meter provider pushing to the metric exporter, both behind exporters that
 * report failures, and a flush and shutdown that never wait longer than `flushTimeoutMs` nor throw.
 * A signal that is off (`OTEL_TRACES_EXPORTER` or `OTEL_METRICS_EXPORTER` `none`, or no endpoint for
 * it) gets no provider, exporter nor connection at all.
 */

import type { Meter } from '@opentelemetry/api'
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { defaultResource, detectResources, processDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources'
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics'
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { signalWords, type Endpoints, type OtelHttpConfig } from './config.ts'
import { deadlineAgents, tlsFromEnvironment } from './deadline-agent.ts'
import type { FailureLog, Signal } from './failures.ts'
import type { SpanOutput } from './open-span.ts'
import type { TraceSettings } from './trace-settings.ts'
import { maskAttributes, type Masker } from './secrets.ts'
import { SCOPE_NAME } from './semconv.ts'

/** Where spans go and a meter, and how to flush and stop them. */
export interface Pipeline {
  /** Undefined with traces off. */
  readonly spans: SpanOutput | undefined
  /** Undefined with metrics off. */
  readonly meter: Meter | undefined
  /** Sends what is buffered; resolves within `flushTimeoutMs`, never rejects. */
  flush(): Promise<void>
  /** Flushes and stops both providers; resolves within `flushTimeoutMs`, never rejects. */
  shutdown(): Promise<void>
}

/**
 * The longest one export's connection may stay open, whatever the endpoint sends: a slow upload of a
 * large batch to a distant collector fits, an endpoint that trickles its answer forever does not.
 * Dispose drops whatever is still open once `flushTimeoutMs` has passed.
 */
const MIN_EXPORT_DEADLINE_MS = 30_000

/** How often metrics are pushed while the process runs (the SDK's default); dispose pushes the rest. */
const METRIC_INTERVAL_MS = 60_000

/** What flush and shutdown reach of one signal: the span processor (traces) or the meter provider. */
interface Provider {
  forceFlush(): Promise<void>
  shutdown(): Promise<void>
}

/** A provider and the signal it sends: a flush that gives up blames only the signals still under way. */
interface SignalProvider {
  signal: 'traces' | 'metrics'
  provider: Provider
}

/** Builds the SDK objects of the signals with an endpoint; nothing is sent until a span ends or metrics are due. */
export function createPipeline(config: OtelHttpConfig, endpoints: Endpoints, settings: TraceSettings, mask: Masker | undefined, failures: FailureLog): Pipeline {
  const resource = createResource(config, mask)
  // One export, its retries included, never outlives the bound dispose waits: no request to a dead
  // endpoint keeps the process alive after dispose has given up on it. The SDK's timeout only counts
  // silence; the agents' deadline counts from the connection's start.
  const deadline = Math.max(config.flushTimeoutMs, MIN_EXPORT_DEADLINE_MS)
  const exporterOptions = { headers: { ...config.headers }, timeoutMillis: config.flushTimeoutMs }
  const providers: SignalProvider[] = []
  const agents: ReturnType<typeof deadlineAgents>[] = []
  let spans: SpanOutput | undefined
  if (endpoints.traces) {
    const traceAgents = deadlineAgents(deadline, tlsFromEnvironment('TRACES', process.env))
    const spanExporter = reportingSpanExporter(new OTLPTraceExporter({ ...exporterOptions, httpAgentOptions: traceAgents.factory, url: endpoints.traces.url }), failures)
    const processor = new BatchSpanProcessor(spanExporter, { exportTimeoutMillis: config.flushTimeoutMs })
    spans = { processor, resource, scope: { name: SCOPE_NAME }, settings }
    providers.push({ signal: 'traces', provider: processor })
    agents.push(traceAgents)
  }
  let meter: Meter | undefined
  if (endpoints.metrics) {
    const metricAgents = deadlineAgents(deadline, tlsFromEnvironment('METRICS', process.env))
    const metricExporter = reportingMetricExporter(new OTLPMetricExporter({ ...exporterOptions, httpAgentOptions: metricAgents.factory, url: endpoints.metrics.url }), failures)
    const meterProvider = new MeterProvider({
      resource,
      readers: [new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: METRIC_INTERVAL_MS, exportTimeoutMillis: config.flushTimeoutMs })],
    })
    meter = meterProvider.getMeter(SCOPE_NAME)
    providers.push({ signal: 'metrics', provider: meterProvider })
    agents.push(metricAgents)
  }
  const bounded = (work: (provider: Provider) => Promise<unknown>) => within(config.flushTimeoutMs, providers, work, failures)
  // Whatever is still open once a bound has passed goes: nothing of ours keeps the process alive.
  // After a flush a later export opens a connection of its own; after shutdown none is opened (the
  // SDK would retry a dropped export on a new one).
  return {
    spans,
    meter,
    flush: async () => {
      if (await bounded((provider) => provider.forceFlush()) === 'expired') for (const each of agents) each.drop()
    },
    shutdown: () => bounded((provider) => provider.shutdown()).then(() => {}).finally(() => {
      for (const each of agents) each.close()
    }),
  }
}

/**
 * `service.name` and the Config's attributes over the SDK's `telemetry.sdk.*`. The process detector
 * only with content: `process.command_args` holds the prompt of `rein run "…"`.
 */
function createResource(config: Pick<OtelHttpConfig, 'serviceName' | 'resource' | 'captureContent'>, mask: Masker | undefined): Resource {
  const base = config.captureContent && mask ? defaultResource().merge(processResource(mask)) : defaultResource()
  return base.merge(resourceFromAttributes({ ...config.resource, 'service.name': config.serviceName }))
}

/** The process detector's attributes, keys masked: the command line may hold one (`rein run "use sk-…"`). */
function processResource(mask: Masker): Resource {
  return resourceFromAttributes(maskAttributes(detectResources({ detectors: [processDetector] }).attributes, mask))
}

/**
 * Waits for `work` on every provider at most `ms` and says which came first; a rejection was reported
 * by the exporter already, a timeout is reported here, for the signals whose work had not settled.
 */
async function within(ms: number, providers: readonly SignalProvider[], work: (provider: Provider) => Promise<unknown>, failures: FailureLog): Promise<'settled' | 'expired'> {
  let timer: NodeJS.Timeout | undefined
  // Failures of both signals in one flush are one line naming both.
  const release = failures.hold()
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), ms)
    timer.unref()
  })
  try {
    const pending = { traces: false, metrics: false }
    const settled = Promise.allSettled(providers.map(({ signal, provider }) => {
      pending[signal] = true
      return started(() => work(provider)).finally(() => {
        pending[signal] = false
      })
    })).then(() => 'settled' as const)
    const outcome = await Promise.race([settled, expired])
    // Only what is still under way is blamed: at expiry some signal is, or all would have settled.
    if (outcome === 'expired') failures.report(signalWords(pending), 'flush-timeout')
    return outcome
  } finally {
    clearTimeout(timer)
    release()
  }
}

/** The promise `work` starts; a synchronous throw becomes a rejection. */
function started(work: () => Promise<unknown>): Promise<unknown> {
  try {
    return work()
  } catch (error) {
    return Promise.reject(error)
  }
}

/** 0 is `ExportResultCode.SUCCESS` (@opentelemetry/core, not a dependency of ours). */
const SUCCESS = 0
const FAILED = 1

type ExportCallback = Parameters<SpanExporter['export']>[1]

/** Tells `failures` about each failed export, then hands the result on. */
function reportingCallback(signal: Signal, failures: FailureLog, done: ExportCallback): ExportCallback {
  return (result) => {
    if (result.code !== SUCCESS) failures.report(signal, result.error)
    done(result)
  }
}

/** `export` of an exporter, with each failure told to `failures` (a throw too) and `done` still called. */
function reporting<T>(signal: Signal, failures: FailureLog, inner: (items: T, done: ExportCallback) => void) {
  return (items: T, done: ExportCallback) => {
    const report = reportingCallback(signal, failures, done)
    try {
      inner(items, report)
    } catch (error) {
      report({ code: FAILED, error: error instanceof Error ? error : new Error(String(error)) })
    }
  }
}

function reportingSpanExporter(inner: SpanExporter, failures: FailureLog): SpanExporter {
  return {
    export: reporting('traces', failures, inner.export.bind(inner)),
    shutdown: () => inner.shutdown(),
    forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
  }
}

function reportingMetricExporter(inner: PushMetricExporter, failures: FailureLog): PushMetricExporter {
  return {
    export: reporting('metrics', failures, inner.export.bind(inner)),
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
    // The reader asks the exporter how to aggregate: OTLP's defaults (cumulative), explicit buckets from advice.
    ...(inner.selectAggregationTemporality ? { selectAggregationTemporality: inner.selectAggregationTemporality.bind(inner) } : {}),
    ...(inner.selectAggregation ? { selectAggregation: inner.selectAggregation.bind(inner) } : {}),
  }
}
