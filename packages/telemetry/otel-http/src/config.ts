/**
 * The plugin's Config, and where each signal goes: Config `endpoint` (a base URL), else the signal's
 * `OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT` (its full URL), else under `OTEL_EXPORTER_OTLP_ENDPOINT`, else nowhere.
 */

import Schema from '@deepseek-ai/schemastery'
import { parseKeyPairsIntoRecord } from '@opentelemetry/core'
import { kindOf, maskUrlPath, ReinError, shownUrl } from '@rein/base'

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

/** The Config schema of `@rein/otel-http`. */
export const OtelHttpConfig: Schema<OtelHttpConfigInput, OtelHttpConfig> = Schema.object({
  // Checked as the config loads, saying how to write it: a pattern's message would not.
  endpoint: Schema.transform(Schema.string(), checkEndpoint)
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

/** Where one signal goes. */
interface SignalEndpoint {
  /** The URL the exporter posts to, as given (a per-signal variable) or under the base URL. */
  url: string
  /**
   * The URL log lines name, without credentials or query: the base URL (no trailing slash) when every
   * signal on goes under it; a per-signal URL's path as given.
   */
  display: string
  /** What named it: `Config endpoint` or the variable. */
  from: string
  /** Named by a per-signal variable, whose URL is used as it is (nothing appended). */
  asGiven: boolean
}

/** Where the signals on go; a signal that is off has none. */
export interface Endpoints {
  traces?: SignalEndpoint
  metrics?: SignalEndpoint
}

/** Which signals go out: `OTEL_TRACES_EXPORTER` and `OTEL_METRICS_EXPORTER` say (`otlp`, the default, or `none`), and whether each has an endpoint. */
export interface Signals {
  traces: boolean
  metrics: boolean
}

/** The two OTLP signals, by the words log lines use for them. */
export type SignalName = keyof Signals

const SIGNALS: readonly SignalName[] = ['traces', 'metrics']

/** The signals on, in the words log lines use: `traces and metrics`, `traces` or `metrics`. */
export function signalWords(signals: Signals): 'traces and metrics' | SignalName {
  return signals.traces && signals.metrics ? 'traces and metrics' : signals.traces ? 'traces' : 'metrics'
}

/**
 * A signal that is off, and why, in words for a log line; `why` sorts it: its exporter variable is
 * `none`, it has no endpoint, or a variable is set but to what cannot work (`misset`: a warning).
 */
export interface SignalOff {
  signal: SignalName
  reason: string
  why: 'none' | 'no-endpoint' | 'misset'
}

/**
 * What `resolveEndpoints` decided: where the signals on go, the signals off and why, and the warnings
 * to log (an exporter variable rein does not understand); or why nothing is exported (`misset`: a
 * variable set, but to what cannot work).
 */
export type EndpointChoice =
  | { kind: 'on'; endpoints: Endpoints; signals: Signals; off: readonly SignalOff[]; warnings: readonly string[] }
  | { kind: 'off'; reason: string; misset: boolean; warnings: readonly string[] }

/** The environment variable the OTLP spec names for the base URL. */
export const ENDPOINT_ENV = 'OTEL_EXPORTER_OTLP_ENDPOINT'

/** The per-signal endpoint variables: the full URL of their signal, used as it is, beating the base URL. */
const SIGNAL_ENDPOINT_ENVS: Readonly<Record<SignalName, string>> = { traces: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', metrics: 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT' }

/** The OTel SDK variables choosing each signal's exporter. */
const EXPORTER_ENVS: Readonly<Record<SignalName, string>> = { traces: 'OTEL_TRACES_EXPORTER', metrics: 'OTEL_METRICS_EXPORTER' }

/**
 * Config `endpoint` beats every variable, for both signals. Without it each signal goes to its
 * per-signal variable, else under `OTEL_EXPORTER_OTLP_ENDPOINT`, else nowhere (that signal is off).
 * A Config endpoint that is not an http(s) URL throws `CONFIG_INVALID` naming it; a malformed
 * variable turns off the signals it would serve (with the reason, for a warning), since telemetry
 * must not stop rein from starting. Checks the rest of the Config first, and then the exporter
 * variables: both `none` is off, whatever the endpoints.
 */
export function resolveEndpoints(config: Pick<OtelHttpConfig, 'endpoint' | 'resource' | 'headers'>, env: NodeJS.ProcessEnv): EndpointChoice {
  if (Object.hasOwn(config.resource, 'service.name')) {
    throw new ReinError('CONFIG_INVALID', 'resource["service.name"]: set the service name with serviceName instead')
  }
  checkHeaders(config.headers)
  const configured = config.endpoint === undefined ? undefined : configuredEndpoints(config.endpoint)
  const traces = exporterChoice('traces', env)
  const metrics = exporterChoice('metrics', env)
  if (!traces.on && !metrics.on) return { kind: 'off', reason: `${EXPORTER_ENVS.traces} and ${EXPORTER_ENVS.metrics} are none`, misset: false, warnings: [] }
  // Said even when nothing is exported: the variable asked for something rein does not do.
  const warnings = [traces.warning, metrics.warning].filter((warning) => warning !== undefined)
  const exporting = { traces: traces.on, metrics: metrics.on }
  const endpoints: Endpoints = {}
  const off: SignalOff[] = []
  const base = configured ? { base: configured, from: 'Config endpoint' } : baseFromEnv(env)
  for (const signal of SIGNALS) {
    const target = exporting[signal] ? signalTarget(signal, configured ? undefined : env, base) : { signal, reason: `${EXPORTER_ENVS[signal]}=none`, why: 'none' as const }
    if ('url' in target) endpoints[signal] = target
    else off.push(target)
  }
  const signals = { traces: endpoints.traces !== undefined, metrics: endpoints.metrics !== undefined }
  if (!signals.traces && !signals.metrics) return { kind: 'off', reason: offReason(off), misset: off.some((each) => each.why === 'misset'), warnings }
  showBaseWhenShared(endpoints, base)
  const problem = envHeadersProblem(config.headers, env, signals)
  if (problem !== undefined) return { kind: 'off', reason: problem, misset: true, warnings }
  warnings.push(...protocolWarnings(env, signals), ...envHeadersWarnings(config.headers, env, signals))
  return { kind: 'on', endpoints, signals, off, warnings }
}

/** A Config `endpoint`'s URLs, or `CONFIG_INVALID` saying what is wrong with it. */
function configuredEndpoints(endpoint: string): BaseUrl {
  const base = httpBase(endpoint)
  const suffix = signalSuffix(base, 'endpoint')
  if (suffix) throw new ReinError('CONFIG_INVALID', suffix)
  return base
}

/** `value` if it is an http(s) URL; else `CONFIG_INVALID` saying what to write. */
function checkEndpoint(value: string): string {
  httpBase(value)
  return value
}

/** The base URL `endpoint` names; `CONFIG_INVALID` saying what to write when it is no http(s) URL. */
function httpBase(endpoint: string): BaseUrl {
  const base = baseUrlOf(endpoint)
  if (!base) throw new ReinError('CONFIG_INVALID', `endpoint ${notHttpUrl(endpoint)}`)
  return base
}

/** Why `value` is no http(s) URL, and what to write: with a scheme when one is all it lacks. Keys in it as `***`. */
function notHttpUrl(value: string): string {
  const shown = maskUrlPath(value.trim())
  if (shown === '') return 'is empty; give the collector\'s OTLP/HTTP base URL, e.g. endpoint: http://localhost:4318'
  if (!shown.includes('://') && URL.canParse(`http://${shown}`)) return `"${shown}" has no http:// or https:// scheme; write endpoint: http://${shown}`
  return `"${shown}" is not an http:// or https:// URL; give the collector's OTLP/HTTP base URL, e.g. endpoint: http://localhost:4318`
}

/** The base URL and what named it, or why the variable cannot serve (a malformed value), or nothing (unset). */
type BaseChoice = { base: BaseUrl; from: string } | { problem: string } | undefined

/** `OTEL_EXPORTER_OTLP_ENDPOINT`, read only if some signal needs it: a malformed value matters only then. */
function baseFromEnv(env: NodeJS.ProcessEnv): BaseChoice {
  const value = env[ENDPOINT_ENV]?.trim()
  if (!value) return undefined
  const base = baseUrlOf(value)
  if (!base) return { problem: `${ENDPOINT_ENV} is not an http:// or https:// URL (e.g. http://localhost:4318)` }
  const suffix = signalSuffix(base, ENDPOINT_ENV)
  return suffix ? { problem: suffix } : { base, from: ENDPOINT_ENV }
}

/**
 * Where a signal that is on goes: its per-signal variable (read only without a Config endpoint: `env`
 * undefined) as it is, else under the base URL; or why it is off.
 */
function signalTarget(signal: SignalName, env: NodeJS.ProcessEnv | undefined, base: BaseChoice): SignalEndpoint | SignalOff {
  const variable = SIGNAL_ENDPOINT_ENVS[signal]
  const own = env?.[variable]?.trim()
  if (own) {
    const display = displayOf(own)
    if (display === undefined) return { signal, reason: `${variable} is not an http:// or https:// URL (e.g. http://localhost:4318/v1/${signal})`, why: 'misset' }
    return { url: own, display, from: variable, asGiven: true }
  }
  if (base === undefined) return { signal, reason: `no endpoint for ${signal}: neither ${variable} nor ${ENDPOINT_ENV} is set`, why: 'no-endpoint' }
  if ('problem' in base) return { signal, reason: base.problem, why: 'misset' }
  return { url: base.base[signal], display: `${base.base.display}/v1/${signal}`, from: base.from, asGiven: false }
}

/** Every signal on under the one base URL: log lines name the base, and one line may name both signals. */
function showBaseWhenShared(endpoints: Endpoints, base: BaseChoice): void {
  if (base === undefined || !('base' in base)) return
  const on = SIGNALS.map((signal) => endpoints[signal]).filter((target) => target !== undefined)
  if (on.every((target) => target.from === base.from)) for (const target of on) target.display = base.base.display
}

/** Why nothing is exported, from the signals off: each reason once (each names its signal, or serves both). */
function offReason(off: readonly SignalOff[]): string {
  if (off.every((each) => each.why === 'no-endpoint')) {
    return `no endpoint is set: neither Config endpoint, ${ENDPOINT_ENV}, ${SIGNAL_ENDPOINT_ENVS.traces} nor ${SIGNAL_ENDPOINT_ENVS.metrics}`
  }
  return [...new Set(off.map((each) => each.reason))].join('; ')
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
  if (unknown.length === 0) return { on: true, warning: `${variable}=${names.join(',')}: none turns ${signal} off only alone; read as otlp` }
  return { on: true, warning: `${variable}=${unknown.join(',')}: rein understands only otlp and none there; read as otlp` }
}

/**
 * Why a base URL ending in a signal's path is a mistake (exports would go to `…/v1/traces/v1/traces`
 * and fail with a bare 404), naming what to give instead; undefined for a good one.
 */
function signalSuffix(base: BaseUrl, named: string): string | undefined {
  const suffix = /\/v1\/(?:traces|metrics)$/.exec(base.path)?.[0]
  if (suffix === undefined) return undefined
  // Read off the path as sent, not the shown one: a key masked just before the suffix cannot hide it.
  const given = new URL(base.traces)
  return `${named} ends in ${suffix}, but it is the base URL: rein sends to <base>/v1/traces and <base>/v1/metrics itself; give ${shownBase(given, base.path.slice(0, -suffix.length))}`
}

/** The variable the OTLP exporter reads every signal's headers from, besides Config `headers`. */
const HEADERS_ENV = 'OTEL_EXPORTER_OTLP_HEADERS'
/** The per-signal header variables, whose headers win over the general one's for their signal. */
const SIGNAL_HEADERS_ENVS: Readonly<Record<SignalName, string>> = { traces: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', metrics: 'OTEL_EXPORTER_OTLP_METRICS_HEADERS' }
/** Every variable the exporter reads headers from: the general one and each signal's. */
export const HEADER_VARIABLES: readonly string[] = [HEADERS_ENV, ...Object.values(SIGNAL_HEADERS_ENVS)]

/**
 * Why the headers the exporter will take from the environment would fail every export, or
 * undefined. Parsed and merged as the exporter does for each signal (`name=value` pairs,
 * percent-decoded; the signal's own variable wins over the general one); a header Config sets is
 * not read from them, nor those of a signal that is off. Names the variable and the header, never
 * the value.
 */
function envHeadersProblem(configured: Record<string, string>, env: NodeJS.ProcessEnv, signals: Signals): string | undefined {
  const general = parseKeyPairsIntoRecord(env[HEADERS_ENV])
  for (const signal of SIGNALS.filter((name) => signals[name])) {
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

/**
 * Why the headers a header variable of a signal that is on names are not what the exporter sends,
 * one warning per entry it drops or cuts: it splits the text at every `,`, reads each value only up
 * to a `;`, and drops an entry that is no `name=value`, has an empty value or a `%` that starts no
 * percent-escape, all without a word, so a dropped `authorization` shows only as the collector's 401.
 * A header Config sets is not read from them. Names a header that is sent cut, and the place of an
 * entry that is dropped (its "name" may be a secret pasted whole), never a value.
 */
function envHeadersWarnings(configured: Record<string, string>, env: NodeJS.ProcessEnv, signals: Signals): string[] {
  const variables = [HEADERS_ENV, ...SIGNALS.filter((name) => signals[name]).map((name) => SIGNAL_HEADERS_ENVS[name])]
  return variables.flatMap((variable) => headerEntriesWarnings(variable, env[variable] ?? '', configured))
}

/** The warnings for one header variable's entries, read as the exporter reads them (@opentelemetry/core `parseKeyPairsIntoRecord`). */
function headerEntriesWarnings(variable: string, text: string, configured: Record<string, string>): string[] {
  return text.split(',').flatMap((entry, index) => {
    if (entry.trim() === '') return []
    const cutAt = entry.indexOf(';')
    const pair = cutAt === -1 ? entry : entry.slice(0, cutAt)
    const equals = pair.indexOf('=')
    const rawName = equals > 0 ? pair.slice(0, equals).trim() : ''
    if (rawName === '') return [`${variable}: entry ${index + 1} is not name=value, so it is not sent (a comma in a value is written %2C)`]
    const name = percentDecoded(rawName)
    if (name !== undefined && Object.hasOwn(configured, name)) return []
    // An entry that is dropped is named by its place: its "name" may be a token pasted whole, its
    // base64 padding read as `name=` with an empty value.
    const place = `entry ${index + 1}`
    const value = percentDecoded(pair.slice(equals + 1).trim())
    if (name === undefined || value === undefined) return [`${variable}: ${place} is not sent: its name or value holds a % that starts no percent-escape (write % as %25)`]
    if (value === '') return [`${variable}: ${place} is not sent: its value is empty${cutAt === -1 ? '' : ' before its first ";" (write ; as %3B)'}`]
    return cutAt === -1 ? [] : [`${variable}: header ${JSON.stringify(name)} is sent cut at its first ";" (write ; as %3B)`]
  })
}

function percentDecoded(text: string): string | undefined {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** The variables choosing the OTLP transport, general and per signal (the signal's own wins). */
const PROTOCOL_ENV = 'OTEL_EXPORTER_OTLP_PROTOCOL'
const SIGNAL_PROTOCOL_ENVS: Readonly<Record<SignalName, string>> = { traces: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', metrics: 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL' }

/**
 * A warning per protocol variable asking a signal that is on for gRPC, which rein does not speak: a
 * gRPC port answers its HTTP requests with what reads as "not HTTP", which says nothing of why.
 * `http/protobuf` asks for nothing an OTLP/HTTP receiver does not take in JSON too.
 */
function protocolWarnings(env: NodeJS.ProcessEnv, signals: Signals): string[] {
  const asking = new Set<string>()
  for (const signal of SIGNALS.filter((name) => signals[name])) {
    const own = SIGNAL_PROTOCOL_ENVS[signal]
    const variable = env[own]?.trim() ? own : PROTOCOL_ENV
    if (env[variable]?.trim().toLowerCase() === 'grpc') asking.add(variable)
  }
  return [...asking].map((variable) => `${variable}=grpc: rein sends OTLP over HTTP with JSON only; give the collector's OTLP/HTTP endpoint (port 4318 by default), not its gRPC one (4317)`)
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

/** A base URL: each signal's URL under it, and itself as log lines show it. */
interface BaseUrl {
  /** Without credentials, query, a key in the path nor trailing slash: safe to log. */
  display: string
  /** The path as sent to, without trailing slash: never logged. */
  path: string
  traces: string
  metrics: string
}

/** An http(s) URL, parsed; undefined for anything else. */
function httpUrl(text: string): URL | undefined {
  let url: URL
  try {
    url = new URL(text.trim())
  } catch {
    return undefined
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined
}

/**
 * A per-signal URL as log lines show it: scheme, host and path as sent to, never the credentials
 * (`user:pass@`), the query (`?api_key=…`) nor a key in the path (`/key/<k>`, `/sk-…`) a URL may
 * hold; undefined if it is no http(s) URL.
 */
function displayOf(text: string): string | undefined {
  const url = httpUrl(text)
  return url && shownUrl(url)
}

/** The signal URLs under a base URL, as the OTLP exporter spec appends them; undefined if it is no http(s) URL. */
function baseUrlOf(text: string): BaseUrl | undefined {
  const url = httpUrl(text)
  if (!url) return undefined
  const path = url.pathname.replace(/\/+$/, '')
  const at = (signal: string) => {
    const target = new URL(url.href)
    target.pathname = `${path}/${signal}`
    return target.href
  }
  return { display: shownBase(url, path), path, traces: at('v1/traces'), metrics: at('v1/metrics') }
}

/** `url` with `path` (no trailing slash) as log lines show a base URL: as `shownUrl` does, without the trailing slash. */
function shownBase(url: URL, path: string): string {
  const shown = new URL(url.href)
  shown.pathname = path
  return shownUrl(shown).replace(/\/+$/, '')
}
