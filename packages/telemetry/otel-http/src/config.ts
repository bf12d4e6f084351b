/** The plugin's Config, and where it sends: Config `endpoint`, else `OTEL_EXPORTER_OTLP_ENDPOINT`, else nowhere. */

import Schema from '@deepseek-ai/schemastery'
import { parseKeyPairsIntoRecord } from '@opentelemetry/core'
import { kindOf, ReinError } from '@rein/base'

/** A resource attribute's value. */
export type ResourceValue = string | number | boolean

/** The Config of `@rein/otel-http` (see the README's Config table). */
export interface OtelHttpConfig {
  /** OTLP/HTTP base URL; traces go to `<endpoint>/v1/traces`, metrics to `<endpoint>/v1/metrics`. */
  endpoint?: string
  /** Sent with every export (an API key, usually); never logged. */
  headers: Record<string, string>
  /** The resource's `service.name`. */
  serviceName: string
  /** More resource attributes (`deployment.environment.name`, …). */
  resource: Record<string, ResourceValue>
  /** Export prompts, answers, tool arguments and results (and the process's command line). */
  captureContent: boolean
  /** The longest dispose (and `flush`) waits on the endpoint, in milliseconds; one export's timeout too. */
  flushTimeoutMs: number
}

type OtelHttpConfigInput = Partial<OtelHttpConfig>

const HTTP_URL = /^https?:\/\/\S+$/i

/** The Config schema of `@rein/otel-http`. */
export const OtelHttpConfig: Schema<OtelHttpConfigInput, OtelHttpConfig> = Schema.object({
  endpoint: Schema.string().pattern(HTTP_URL)
    .description('OTLP/HTTP base URL, e.g. http://localhost:4318. Beats OTEL_EXPORTER_OTLP_ENDPOINT; neither set: nothing is exported.'),
  // Any value here, checked by checkHeaders: the schema's own message would quote a value YAML read
  // as a number, or the whole `name=value` string someone gave, and a header's value is a
  // credential, usually.
  headers: Schema.any().default({})
    .description('Headers sent with every export (an API key, usually). Never logged.'),
  serviceName: Schema.string().min(1).default('rein').description('The resource\'s service.name.'),
  resource: Schema.dict(Schema.union([Schema.string(), Schema.number(), Schema.boolean()])).default({})
    .description('More resource attributes; service.name is set by serviceName.'),
  captureContent: Schema.boolean().default(false)
    .description('Export prompts, answers, tool arguments and results. Off: not one byte of content leaves.'),
  flushTimeoutMs: Schema.natural().min(1).max(60_000).default(2_000)
    .description('The longest dispose waits on the endpoint (so the longest a process exit waits on a dead one), in ms.'),
}) as Schema<OtelHttpConfigInput, OtelHttpConfig>

/** Where the two signals go. */
export interface Endpoints {
  /** The base URL, without credentials, query or trailing slash: safe to log. */
  display: string
  traces: string
  metrics: string
}

/** Which signals go out: `OTEL_TRACES_EXPORTER` and `OTEL_METRICS_EXPORTER` say (`otlp`, the default, or `none`). */
export interface Signals {
  traces: boolean
  metrics: boolean
}

/** The two OTLP signals, by the words log lines use for them. */
type SignalName = keyof Signals

/** The signals on, in the words log lines use: `traces and metrics`, `traces` or `metrics`. */
export function signalWords(signals: Signals): 'traces and metrics' | SignalName {
  return signals.traces && signals.metrics ? 'traces and metrics' : signals.traces ? 'traces' : 'metrics'
}

/**
 * What `resolveEndpoints` decided: the URLs, the signals on and the warnings to log (an exporter
 * variable rein does not understand), or why nothing is exported (`misset`: a variable set, but to
 * what cannot work).
 */
export type EndpointChoice =
  | { kind: 'on'; endpoints: Endpoints; from: 'config' | 'env'; signals: Signals; warnings: readonly string[] }
  | { kind: 'off'; reason: string; misset: boolean }

/** The environment variable the OTLP spec names for the base URL. */
export const ENDPOINT_ENV = 'OTEL_EXPORTER_OTLP_ENDPOINT'

/** The OTel SDK variables choosing each signal's exporter. */
export const EXPORTER_ENVS: Readonly<Record<SignalName, string>> = { traces: 'OTEL_TRACES_EXPORTER', metrics: 'OTEL_METRICS_EXPORTER' }

/**
 * Config `endpoint` beats the environment variable. A Config endpoint that is not an http(s) URL
 * throws `CONFIG_INVALID` naming it; a malformed variable turns export off (with the reason, for a
 * warning), since telemetry must not stop rein from starting. Checks the rest of the Config first,
 * and then the exporter variables: both `none` is off, whatever the endpoint.
 */
export function resolveEndpoints(config: Pick<OtelHttpConfig, 'endpoint' | 'resource' | 'headers'>, env: NodeJS.ProcessEnv): EndpointChoice {
  if (Object.hasOwn(config.resource, 'service.name')) {
    throw new ReinError('CONFIG_INVALID', 'resource["service.name"]: set the service name with serviceName instead')
  }
  checkHeaders(config.headers)
  const configured = config.endpoint === undefined ? undefined : configuredEndpoints(config.endpoint)
  const traces = exporterChoice('traces', env)
  const metrics = exporterChoice('metrics', env)
  if (!traces.on && !metrics.on) return { kind: 'off', reason: `${EXPORTER_ENVS.traces} and ${EXPORTER_ENVS.metrics} are none`, misset: false }
  const signals = { traces: traces.on, metrics: metrics.on }
  const exporting = { signals, warnings: [traces.warning, metrics.warning].filter((warning) => warning !== undefined) }
  if (configured) return exportingTo(configured, 'config', config.headers, env, exporting)
  const fromEnv = env[ENDPOINT_ENV]?.trim()
  if (!fromEnv) return withoutBase(env, signals)
  const endpoints = endpointsOf(fromEnv)
  if (!endpoints) return { kind: 'off', reason: `${ENDPOINT_ENV} is not an http:// or https:// URL (e.g. http://localhost:4318)`, misset: true }
  const suffix = signalSuffix(endpoints, ENDPOINT_ENV)
  if (suffix) return { kind: 'off', reason: suffix, misset: true }
  return exportingTo(endpoints, 'env', config.headers, env, exporting)
}

/** A Config `endpoint`'s URLs, or `CONFIG_INVALID` saying what is wrong with it. */
function configuredEndpoints(endpoint: string): Endpoints {
  const endpoints = endpointsOf(endpoint)
  if (!endpoints) throw new ReinError('CONFIG_INVALID', `endpoint is not an http:// or https:// URL (e.g. http://localhost:4318)`)
  const suffix = signalSuffix(endpoints, 'endpoint')
  if (suffix) throw new ReinError('CONFIG_INVALID', suffix)
  return endpoints
}

/** Whether a signal goes out, and the warning an exporter variable rein does not understand earns. */
interface ExporterChoice {
  on: boolean
  warning?: string
}

/**
 * A signal's exporter variable, read as the OTel SDK environment spec says (a comma-separated list,
 * case-insensitive): unset, empty or `otlp` exports; `none` alone turns the signal off. Anything
 * else (`console`, `zipkin`, `none` beside another) keeps otlp, with a warning naming what was not
 * understood, as the SDKs keep their default.
 */
function exporterChoice(signal: SignalName, env: NodeJS.ProcessEnv): ExporterChoice {
  const variable = EXPORTER_ENVS[signal]
  const names = (env[variable] ?? '').split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '')
  if (names.every((name) => name === 'otlp')) return { on: true }
  if (names.every((name) => name === 'none')) return { on: false }
  const unknown = names.filter((name) => name !== 'otlp' && name !== 'none')
  const named = (unknown.length > 0 ? unknown : names).join(',')
  return { on: true, warning: `${variable}=${named}: rein understands only otlp and none there; exporting ${signal} with otlp` }
}

/** The per-signal endpoint variables other OTel SDKs read, which rein does not. */
const SIGNAL_ENDPOINT_ENVS: Readonly<Record<SignalName, string>> = { traces: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', metrics: 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT' }

/**
 * Off, with no base URL set. A per-signal endpoint set alone (of a signal that is on) was meant to
 * export: the warning names the base URL to give instead when the variable ends in its signal's
 * path, and how to send that signal only, when the other is on with no endpoint of its own.
 */
function withoutBase(env: NodeJS.ProcessEnv, signals: Signals): EndpointChoice {
  const signal = (['traces', 'metrics'] as const).find((name) => signals[name] && env[SIGNAL_ENDPOINT_ENVS[name]]?.trim())
  if (signal === undefined) return { kind: 'off', reason: `neither Config endpoint nor ${ENDPOINT_ENV} is set`, misset: false }
  const variable = SIGNAL_ENDPOINT_ENVS[signal]
  const other: SignalName = signal === 'traces' ? 'metrics' : 'traces'
  const display = endpointsOf(env[variable] ?? '')?.display
  const path = `/v1/${signal}`
  const base = display?.endsWith(path) ? display.slice(0, -path.length) : undefined
  const head = `${variable} is set, but rein reads only ${ENDPOINT_ENV}`
  const only = signals[other] && !env[SIGNAL_ENDPOINT_ENVS[other]]?.trim() ? `${EXPORTER_ENVS[other]}=none to send ${signal} only` : undefined
  const reason = base !== undefined
    ? `${head} (the base URL): set ${ENDPOINT_ENV}=${base}${only ? `, and ${only}` : ''}`
    : `${head} (the base URL, e.g. http://localhost:4318)${only ? `; set ${only}` : ''}`
  return { kind: 'off', reason, misset: true }
}

/**
 * Why a base URL ending in a signal's path is a mistake (exports would go to `…/v1/traces/v1/traces`
 * and fail with a bare 404), naming what to give instead; undefined for a good one.
 */
function signalSuffix(endpoints: Endpoints, named: string): string | undefined {
  const suffix = /\/v1\/(?:traces|metrics)$/.exec(endpoints.display)?.[0]
  if (suffix === undefined) return undefined
  return `${named} ends in ${suffix}, but it is the base URL: rein sends to <base>/v1/traces and <base>/v1/metrics itself; give ${endpoints.display.slice(0, -suffix.length)}`
}

/** On, unless a header variable of a signal that is on holds what every export would fail on: then off, with the reason for a warning. */
function exportingTo(
  endpoints: Endpoints, from: 'config' | 'env', headers: Record<string, string>, env: NodeJS.ProcessEnv,
  exporting: { signals: Signals; warnings: readonly string[] },
): EndpointChoice {
  const problem = envHeadersProblem(headers, env, exporting.signals)
  return problem === undefined ? { kind: 'on', endpoints, from, signals: exporting.signals, warnings: exporting.warnings } : { kind: 'off', reason: problem, misset: true }
}

/** The variable the OTLP exporter reads every signal's headers from, besides Config `headers`. */
const HEADERS_ENV = 'OTEL_EXPORTER_OTLP_HEADERS'
/** The per-signal variables, whose headers win over the general one's for their signal. */
const SIGNAL_HEADERS_ENVS: Readonly<Record<SignalName, string>> = { traces: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', metrics: 'OTEL_EXPORTER_OTLP_METRICS_HEADERS' }

/**
 * Why the headers the exporter will take from the environment would fail every export, or
 * undefined. Parsed and merged as the exporter does for each signal (`name=value` pairs,
 * percent-decoded; the signal's own variable wins over the general one); a header Config sets is
 * not read from them, nor those of a signal that is off. Names the variable and the header, never
 * the value.
 */
function envHeadersProblem(configured: Record<string, string>, env: NodeJS.ProcessEnv, signals: Signals): string | undefined {
  const general = parseKeyPairsIntoRecord(env[HEADERS_ENV])
  for (const signal of (['traces', 'metrics'] as const).filter((name) => signals[name])) {
    const variable = SIGNAL_HEADERS_ENVS[signal]
    const own = parseKeyPairsIntoRecord(env[variable])
    for (const name of new Set([...Object.keys(general), ...Object.keys(own)])) {
      if (Object.hasOwn(configured, name)) continue
      const [from, value] = Object.hasOwn(own, name) ? [variable, own[name]] : [HEADERS_ENV, general[name]]
      const problem = headerProblem(name, value ?? '')
      if (problem) return `${from}: header ${JSON.stringify(name)}: ${problem}`
    }
  }
  return undefined
}

/** An HTTP token (RFC 9110), what a header name must be. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/i
/** What Node refuses in a header value: line breaks and other control characters (a tab is fine), anything past U+00FF. */
const HEADER_VALUE_REFUSED = /[^\t\x20-\x7e\x80-\xff]/

/**
 * Refuses, at load, headers Node's HTTP client would refuse at every export (and a CR or LF would
 * split the request). The error names the header, never its value: that is a credential, usually.
 */
function checkHeaders(headers: unknown): void {
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
    throw new ReinError('CONFIG_INVALID', `headers: must be a map of header names to values (authorization: Bearer …), not ${kindOf(headers)}`)
  }
  for (const [name, value] of Object.entries(headers)) {
    const text = typeof value === 'string' ? value : undefined
    const problem = headerProblem(name, text ?? '') ?? (text === undefined ? 'must be text; quote it in cordis.yml (a value that looks like a number is read as one)' : undefined)
    if (problem) throw new ReinError('CONFIG_INVALID', `headers[${JSON.stringify(name)}]: ${problem}`)
  }
}

/** What Node's HTTP client would refuse in this header, in words that never quote its value. */
function headerProblem(name: string, value: string): string | undefined {
  if (!HEADER_NAME.test(name)) return 'not a valid HTTP header name'
  if (HEADER_VALUE_REFUSED.test(value)) return 'the value holds a line break or another character an HTTP header cannot carry'
  return undefined
}

/** The signal URLs under a base URL, as the OTLP exporter spec appends them; undefined if it is no http(s) URL. */
function endpointsOf(base: string): Endpoints | undefined {
  let url: URL
  try {
    url = new URL(base.trim())
  } catch {
    return undefined
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
  const path = url.pathname.replace(/\/+$/, '')
  const at = (signal: string) => {
    const target = new URL(url.href)
    target.pathname = `${path}/${signal}`
    return target.href
  }
  return { display: `${url.protocol}//${url.host}${path}`, traces: at('v1/traces'), metrics: at('v1/metrics') }
}
