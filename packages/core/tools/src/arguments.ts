/** Turns the model's raw argument string into frozen, validated arguments, or says every way it is wrong. */

import { cutHead, cutTail, isReinError, toFrozenJson, type FrozenJson, type JsonObject } from '@rein/base'
import { findInexactNumbers, findRepeatedKeys } from './exact-numbers.ts'
import { findHalfCharacters } from './half-characters.ts'
import { findLeftOutFields } from './left-out-fields.ts'
import { validateJson, type JsonSchema } from './json-schema.ts'
import { applyDefaults, hasDefaults } from './schema-defaults.ts'

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

/**
 * An empty or blank string counts as `{}`: several servers send that for tools without parameters.
 * Missing properties that declare a default get it before validation.
 */
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
    // JSON.parse gives only plain data, so the one thing toFrozenJson can refuse is ±Infinity from a huge literal.
    if (isReinError(error, 'NOT_JSON')) {
      const path = error.details?.path
      return { ok: false, problems: [`${typeof path === 'string' ? shownPath(path) : '$'}: the number is too large to represent; send a smaller one`] }
    }
    throw error
  }
  const repeated = findRepeatedKeys(raw, keyCount(args))
  if (repeated.length > 0) {
    return { ok: false, problems: report(repeated.map((path) => `${shownPath(path)}: given more than once; send each property once, with the value you mean`)) }
  }
  const inexact = findInexactNumbers(raw)
  if (inexact.length > 0) {
    return {
      ok: false,
      problems: report(inexact.map(({ path, text }) =>
        `${shownPath(path)}: ${text} is beyond ±${Number.MAX_SAFE_INTEGER}, past which a JSON number is not kept exactly; send a value within that range`)),
    }
  }
  const halves = findHalfCharacters(raw, args)
  if (halves.length > 0) {
    const half = 'holds half a character (a lone UTF-16 surrogate, often a cut emoji); send the whole character, or leave it out'
    return { ok: false, problems: report(halves.map(({ path, name }) => `${shownPath(path)}: ${name ? 'its name ' : ''}${half}`)) }
  }
  const placeholders = findLeftOutFields(raw, args)
  if (placeholders.length > 0) {
    const what = 'is only the placeholder compaction left in place of text from an earlier call, not the text itself; send the text (read it again from where it lives, such as the file, if you need it)'
    return { ok: false, problems: report(placeholders.map((path) => `${shownPath(path)}: ${what}`)) }
  }
  if (hasDefaults(schema)) args = applyDefaults(schema, args)
  const issues = validateJson(schema, args)
  if (issues.length > 0) return { ok: false, problems: report(issues.map((issue) => `${shownPath(issue.path)}: ${issue.message}`)) }
  return { ok: true, args: args as FrozenJson<JsonObject> }
}

/** How many keys `value` holds, at every depth. */
function keyCount(value: FrozenJson): number {
  if (typeof value !== 'object' || value === null) return 0
  let count = 0
  if (Array.isArray(value)) {
    for (const item of value) count += keyCount(item as FrozenJson)
    return count
  }
  for (const item of Object.values(value)) count += 1 + keyCount(item as FrozenJson)
  return count
}

/** The longest path shown in a problem: a property name is the model's, and may be any length. */
const MAX_PATH_CHARS = 200

/** `path`, its middle cut when too long: the head says where it starts, the tail which key is wrong. */
function shownPath(path: string): string {
  if (path.length <= MAX_PATH_CHARS) return path
  return `${cutHead(path, MAX_PATH_CHARS / 2)}…${cutTail(path, MAX_PATH_CHARS / 2 - 1)}`
}

function report(problems: string[]): string[] {
  if (problems.length <= MAX_REPORTED) return problems
  return [...problems.slice(0, MAX_REPORTED), `…and ${problems.length - MAX_REPORTED} more`]
}
