/** The plugin's Config, and where it sends: Config `endpoint`, else `OTEL_EXPORTER_OTLP_ENDPOINT`, else nowhere. */

import Schema from '@deepseek-ai/schemastery'
import { ReinError } from '@rein/base'

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
  headers: Schema.dict(Schema.string()).default({})
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

/** What `resolveEndpoints` decided: the URLs, or why nothing is exported. */
export type EndpointChoice =
  | { kind: 'on'; endpoints: Endpoints; from: 'config' | 'env' }
  | { kind: 'off'; reason: string }

/** The environment variable the OTLP spec names for the base URL. */
export const ENDPOINT_ENV = 'OTEL_EXPORTER_OTLP_ENDPOINT'

/**
 * Config `endpoint` beats the environment variable. A Config endpoint that is not an http(s) URL
 * throws `CONFIG_INVALID` naming it; a malformed variable turns export off (with the reason), since
 * telemetry must not stop rein from starting.
 */
export function resolveEndpoints(config: Pick<OtelHttpConfig, 'endpoint' | 'resource'>, env: NodeJS.ProcessEnv): EndpointChoice {
  if (Object.hasOwn(config.resource, 'service.name')) {
    throw new ReinError('CONFIG_INVALID', 'resource["service.name"]: set the service name with serviceName instead')
  }
  if (config.endpoint !== undefined) {
    const endpoints = endpointsOf(config.endpoint)
    if (!endpoints) throw new ReinError('CONFIG_INVALID', `endpoint is not an http:// or https:// URL (e.g. http://localhost:4318)`)
    return { kind: 'on', endpoints, from: 'config' }
  }
  const fromEnv = env[ENDPOINT_ENV]?.trim()
  if (!fromEnv) return { kind: 'off', reason: `neither Config endpoint nor ${ENDPOINT_ENV} is set` }
  const endpoints = endpointsOf(fromEnv)
  if (!endpoints) return { kind: 'off', reason: `${ENDPOINT_ENV} is not an http:// or https:// URL (e.g. http://localhost:4318)` }
  return { kind: 'on', endpoints, from: 'env' }
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
