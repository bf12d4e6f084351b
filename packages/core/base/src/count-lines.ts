/**
 * Lines as a reader counts them: a newline ends a line, it does not start one. `seq 800` prints
 * 800 lines, not 801; the empty text has none.
 */
export function countLines(text: string): number {
  if (text === '') return 0
  return countNewlines(text) + (text.endsWith('\n') ? 0 : 1)
}

/** The `\n` characters in `text`: what a running count of lines adds up chunk by chunk. */
export function countNewlines(text: string): number {
  let count = 0
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++
  return count
}
