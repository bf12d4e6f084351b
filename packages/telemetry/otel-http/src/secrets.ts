/**
 * Keys masked out of exported content (Config `captureContent`): content is what the model and the
 * tools saw, which may quote a key (a tool that printed the environment, a prompt a key was pasted
 * into), and a collector must never get one. Built once at load; applied only to content, so a run
 * without `captureContent` pays nothing.
 */

import type { AttributeValue, Attributes } from '@opentelemetry/api'
import { maskKeyShapes, maskText, secretValues } from '@rein/base'

/** `text` with every key it holds replaced by `***`. */
export type Masker = (text: string) => string

/** The variables whose header values this exporter sends: each a secret whatever the header's name. */
const HEADER_VARIABLES = ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', 'OTEL_EXPORTER_OTLP_METRICS_HEADERS']

/**
 * Masks the values of `env`'s secret variables (`DEEPSEEK_API_KEY`, …), of the headers sent to the
 * collector (Config `headers` and the OTLP header variables; a `Bearer <token>`'s token too), and
 * text shaped like a known kind of key.
 */
export function contentMasker(env: NodeJS.ProcessEnv, headers: Readonly<Record<string, string>>): Masker {
  const values = [...secretValues(env), ...headerSecrets(Object.values(headers)), ...headerSecrets(HEADER_VARIABLES.flatMap((name) => envHeaderValues(env[name])))]
  const secrets = [...new Set(values)].filter((value) => value !== '').sort((a, b) => b.length - a.length)
  return (text) => maskKeyShapes(maskText(text, secrets))
}

/** `attributes` with every string value (in an array too) masked. */
export function maskAttributes(attributes: Attributes, mask: Masker): Attributes {
  const masked: Attributes = {}
  for (const key of Object.keys(attributes)) masked[key] = maskValue(attributes[key], mask)
  return masked
}

function maskValue<T extends AttributeValue | undefined>(value: T, mask: Masker): T {
  if (typeof value === 'string') return mask(value) as T
  if (Array.isArray(value)) return value.map((each: unknown) => (typeof each === 'string' ? mask(each) : each)) as T
  return value
}

/** Each header value, and the credential after an auth scheme (`Bearer <token>`): a message may quote the token alone. */
function headerSecrets(values: readonly string[]): string[] {
  return values.flatMap((value) => {
    const trimmed = value.trim()
    const token = /^\S+\s+(\S+)$/.exec(trimmed)?.[1]
    return token === undefined ? [trimmed] : [trimmed, token]
  })
}

/** The values of an OTLP header variable (`name=value,…`), percent-decoded where they can be. */
function envHeaderValues(text: string | undefined): string[] {
  if (!text) return []
  return text.split(',').flatMap((entry) => {
    const at = entry.indexOf('=')
    if (at < 0) return []
    const raw = entry.slice(at + 1)
    try {
      return [decodeURIComponent(raw)]
    } catch {
      return [raw]
    }
  })
}
