/**
 * Finds arguments that are only the placeholder compaction puts in place of a long field of a call
 * it pruned (`[2000 characters left out to save context]`). A model that copies its own earlier
 * call copies the placeholder too; taken as the text, a write would replace a file's content with
 * it. Runs the walk only when the raw text holds the placeholder's words.
 */

import { childPath, isLeftOutText, type FrozenJson } from '@rein/base'

const WORDS = 'characters left out to save context]'

/** The path of every string in `value` (parsed from `raw`) that is only the placeholder. */
export function findLeftOutFields(raw: string, value: FrozenJson): string[] {
  if (!raw.includes(WORDS)) return []
  const found: string[] = []
  walk(value, '$', found)
  return found
}

function walk(value: FrozenJson, path: string, found: string[]): void {
  if (typeof value === 'string') {
    if (isLeftOutText(value)) found.push(path)
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => walk(item as FrozenJson, childPath(path, index), found))
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) walk(item as FrozenJson, childPath(path, key), found)
  }
}
