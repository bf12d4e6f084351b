/** The plugin's Config, and where it sends: Config `endpoint`, else `OTEL_EXPORTER_OTLP_ENDPOINT`, else nowhere. */

import Schema from '@deepseek-ai/schemastery'
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

/** What `resolveEndpoints` decided: the URLs, or why nothing is exported (`misset`: a variable set, but not to a URL). */
export type EndpointChoice =
  | { kind: 'on'; endpoints: Endpoints; from: 'config' | 'env' }
  | { kind: 'off'; reason: string; misset: boolean }

/** The environment variable the OTLP spec names for the base URL. */
export const ENDPOINT_ENV = 'OTEL_EXPORTER_OTLP_ENDPOINT'

/**
 * Config `endpoint` beats the environment variable. A Config endpoint that is not an http(s) URL
 * throws `CONFIG_INVALID` naming it; a malformed variable turns export off (with the reason, for a
 * warning), since telemetry must not stop rein from starting. Checks the rest of the Config first.
 */
export function resolveEndpoints(config: Pick<OtelHttpConfig, 'endpoint' | 'resource' | 'headers'>, env: NodeJS.ProcessEnv): EndpointChoice {
  if (Object.hasOwn(config.resource, 'service.name')) {
    throw new ReinError('CONFIG_INVALID', 'resource["service.name"]: set the service name with serviceName instead')
  }
  checkHeaders(config.headers)
  if (config.endpoint !== undefined) {
    const endpoints = endpointsOf(config.endpoint)
    if (!endpoints) throw new ReinError('CONFIG_INVALID', `endpoint is not an http:// or https:// URL (e.g. http://localhost:4318)`)
    return { kind: 'on', endpoints, from: 'config' }
  }
  const fromEnv = env[ENDPOINT_ENV]?.trim()
  if (!fromEnv) return { kind: 'off', reason: `neither Config endpoint nor ${ENDPOINT_ENV} is set`, misset: false }
  const endpoints = endpointsOf(fromEnv)
  if (!endpoints) return { kind: 'off', reason: `${ENDPOINT_ENV} is not an http:// or https:// URL (e.g. http://localhost:4318)`, misset: true }
  return { kind: 'on', endpoints, from: 'env' }
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
    const field = `headers[${JSON.stringify(name)}]`
    if (!HEADER_NAME.test(name)) throw new ReinError('CONFIG_INVALID', `${field}: not a valid HTTP header name`)
    if (typeof value !== 'string') throw new ReinError('CONFIG_INVALID', `${field}: must be text; quote it in cordis.yml (a value that looks like a number is read as one)`)
    if (HEADER_VALUE_REFUSED.test(value)) {
      throw new ReinError('CONFIG_INVALID', `${field}: the value holds a line break or another character an HTTP header cannot carry`)
    }
  }
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
