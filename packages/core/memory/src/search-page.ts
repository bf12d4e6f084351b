/** How `memory_search`'s results read to the model: one line each, contents cut to fit one page. */

import { clip, oneLine } from './format.ts'

/**
 * The most characters of content one page of results shows, shared among its entries. The page
 * must stay well under the agent's spill threshold (`spillAfterChars`, 20 000 by default): past it
 * the model reads only the head, the tail and a path, not its memories. Each line's id, scope,
 * type and age add about 60 characters.
 */
const SEARCH_PAGE_CHARS = 10_000

/** The least content an entry shows, however many results: enough to tell it from the others. */
const MIN_SHOWN_CHARS = 200

/** One result as `memory_search` returns it. */
interface FoundEntry {
  readonly id: string
  readonly scope: string
  readonly type: string
  readonly content: string
  readonly age: string
}

/**
 * One line per entry (`mem_… (project, decision, 3 days ago): …`), each content cut to its share of
 * `SEARCH_PAGE_CHARS`; when one was cut, a last line says so and how to see more.
 */
export function renderSearchPage(entries: readonly FoundEntry[]): string {
  const shown = shownChars(entries.length)
  let cut = false
  const lines = entries.map((entry) => {
    const content = oneLine(entry.content)
    const clipped = clip(content, shown)
    if (clipped !== content) cut = true
    return `${entry.id} (${entry.scope}, ${entry.type}, ${entry.age}): ${clipped}`
  })
  // No tool reads one entry whole: a page of fewer results gives each a larger share.
  if (cut) lines.push(`Entries ending in … were cut to ${shown} characters${entries.length > 1 ? '; a smaller limit shows more of each' : ''}.`)
  return lines.join('\n')
}

/** Each entry's share of the page, at least `MIN_SHOWN_CHARS`. */
function shownChars(count: number): number {
  return Math.max(MIN_SHOWN_CHARS, Math.floor(SEARCH_PAGE_CHARS / Math.max(1, count)))
}
