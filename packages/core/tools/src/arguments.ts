/** Turns the model's raw argument string into frozen, validated arguments, or says every way it is wrong. */

import { isReinError, toFrozenJson, type FrozenJson, type JsonObject } from '@rein/base'
import { validateJson, type JsonSchema } from './json-schema.ts'

export interface ArgumentLimits {
  /** Largest raw argument string, in UTF-8 bytes. */
  maxArgumentBytes: number
  /** Deepest nesting of objects and arrays. */
  maxArgumentDepth: number
}

export type ParsedArguments =
  | { ok: true; args: FrozenJson<JsonObject> }
  | { ok: false; problems: string[] }

const MAX_REPORTED = 20

/** An empty or blank string counts as `{}`: several servers send that for tools without parameters. */
export function parseArguments(raw: string, schema: JsonSchema, limits: ArgumentLimits): ParsedArguments {
  if (typeof raw !== 'string') return { ok: false, problems: ['arguments must be a JSON string'] }
  const bytes = Buffer.byteLength(raw, 'utf8')
  if (bytes > limits.maxArgumentBytes) {
    return { ok: false, problems: [`arguments are ${bytes} bytes; the limit is ${limits.maxArgumentBytes}`] }
  }
  let parsed: unknown
  try {
    parsed = raw.trim() === '' ? {} : JSON.parse(raw)
  } catch (error) {
    return { ok: false, problems: [`arguments are not valid JSON (${(error as Error).message})`] }
  }
  let args: FrozenJson
  try {
    args = toFrozenJson(parsed, { maxDepth: limits.maxArgumentDepth })
  } catch (error) {
    if (isReinError(error, 'JSON_TOO_DEEP')) {
      return { ok: false, problems: [`arguments nest deeper than ${limits.maxArgumentDepth} levels`] }
    }
    throw error
  }
  const issues = validateJson(schema, args)
  if (issues.length > 0) {
    const problems = issues.slice(0, MAX_REPORTED).map((issue) => `${issue.path}: ${issue.message}`)
    if (issues.length > MAX_REPORTED) problems.push(`…and ${issues.length - MAX_REPORTED} more`)
    return { ok: false, problems }
  }
  return { ok: true, args: args as FrozenJson<JsonObject> }
}
