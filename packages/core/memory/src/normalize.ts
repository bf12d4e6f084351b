/** How two contents count as the same memory: case, spacing and a trailing full stop do not matter. */

/** The form `write` compares contents in; a store keeps it beside the entry to find duplicates. */
export function normalizeContent(content: string): string {
  return content.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim().replace(/[.。!！]+$/u, '')
}
