/**
 * Keys masked out of exported content (Config `captureContent`): content is what the model and the
 * tools saw, which may quote a key (a tool that printed the environment, a prompt a key was pasted
 * into), and a collector must never get one. Built once at load for content; the same masking keeps
 * a key a collector echoed out of a failure line, built then (plugin.ts). A run without
 * `captureContent` whose exports never fail pays nothing.
 */

import type { AttributeValue, Attributes } from '@opentelemetry/api'
import { parseKeyPairsIntoRecord } from '@opentelemetry/core'
import { isSecretName, keyBody, maskKeyShapes, maskText, secretValues } from '@rein/base'
import { HEADER_VARIABLES } from './config.ts'

/** `text` with every key it holds replaced by `***`. */
export type Masker = (text: string) => string


/**
 * Masks the values of `env`'s secret variables (`DEEPSEEK_API_KEY`, …), of the headers sent to the
 * collector (Config `headers` and the OTLP header variables; a `Bearer <token>`'s token too), and
 * text shaped like a known kind of key.
 */
export function contentMasker(env: NodeJS.ProcessEnv, headers: Readonly<Record<string, string>>): Masker {
  const values = [...secretValues(env), ...headerSecrets(Object.entries(headers)), ...headerSecrets(HEADER_VARIABLES.flatMap((name) => Object.entries(parseKeyPairsIntoRecord(env[name]))))]
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

/**
 * The credentials among collector headers: a header named like a secret (`authorization`,
 * `x-api-key`), a value with an auth scheme (`Bearer …`), or a value that looks like a token whatever
 * its name (`x-honeycomb-team`); and the credential after an auth scheme (`Bearer <token>`), which a
 * message may quote alone. An org id or a content type is left alone: masking it would blank every
 * mention of it in the content.
 */
function headerSecrets(headers: readonly (readonly [string, string])[]): string[] {
  return headers.flatMap(([name, value]) => {
    const trimmed = value.trim()
    const token = /^\S+\s+(\S+)$/.exec(trimmed)?.[1]
    if (!isSecretName(name) && !AUTH_SCHEME.test(trimmed) && !looksLikeToken(token ?? trimmed)) return []
    const credential = token ?? trimmed
    // A message may quote a key without its kind prefix (`sk-proj-`), as it may quote a token alone.
    const body = keyBody(credential)
    return [...(token === undefined ? [trimmed] : [trimmed, token]), ...(body === undefined ? [] : [body])]
  })
}

/** A value that opens with an auth scheme (`Bearer …`, `Basic …`): a credential, however short or plain. */
const AUTH_SCHEME = /^(?:bearer|basic|token|digest|apikey|api-key|key)\s+\S/i

/** A run of 16 or more characters with no space, holding letters and digits: how keys and tokens look, and words rarely do. */
function looksLikeToken(value: string): boolean {
  return value.length >= 16 && !/\s/.test(value) && /[A-Za-z]/.test(value) && /\d/.test(value)
}
