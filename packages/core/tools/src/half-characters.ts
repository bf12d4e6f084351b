/**
 * Finds text in arguments that holds half a character: a lone UTF-16 surrogate, most often an emoji
 * the model's output was cut in. A body would write it changed (UTF-8 has no form for it, so a
 * file gets U+FFFD) or echo it into a result, and a provider that checks its input refuses every
 * request carrying it. Runs the walk only when the text could hold one, so the common call pays
 * for two regular-expression tests.
 */

import { childPath, LONE_SURROGATE, type FrozenJson } from '@rein/base'

/** A surrogate written as a JSON escape (`\ud83d`), whole pair or not: the walk tells which. */
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/

/** Where half a character sits: a string's path, or (`name`) the path of a property whose name holds it. */
export interface HalfCharacter {
  path: string
  name: boolean
}

/** Every place in `value` (parsed from `raw`) whose text, or whose property name, holds half a character. */
export function findHalfCharacters(raw: string, value: FrozenJson): HalfCharacter[] {
  if (!LONE_SURROGATE.test(raw) && !ESCAPED_SURROGATE.test(raw)) return []
  const found: HalfCharacter[] = []
  walk(value, '$', found)
  return found
}

function walk(value: FrozenJson, path: string, found: HalfCharacter[]): void {
  if (typeof value === 'string') {
    if (LONE_SURROGATE.test(value)) found.push({ path, name: false })
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => walk(item as FrozenJson, childPath(path, i), found))
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const at = childPath(path, key)
      if (LONE_SURROGATE.test(key)) found.push({ path: at, name: true })
      walk(item as FrozenJson, at, found)
    }
  }
}
