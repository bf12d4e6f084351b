/**
 * `allow` / `deny` command patterns, checked before a command runs. A convenience that catches
 * the obvious (`git push`, `sudo …`), not a sandbox: a shell has endless ways to say the same thing.
 */

import { ReinError, shorten } from '@rein/base'

/** Patterns from Config: `*` matches any run of characters; everything else is literal. */
export interface CommandRules {
  allow: readonly string[]
  deny: readonly string[]
}

/**
 * Returns why `command` is refused, or undefined. The command and each of its pieces split at
 * `;`, `&&`, `||`, `|`, `&` and newlines are checked (quotes are not understood, which only ever
 * makes the check stricter): any piece matching a deny pattern refuses it; with an allow list,
 * every piece must match an allow pattern.
 */
export function refusal(command: string, rules: CommandRules): string | undefined {
  const deny = rules.deny.map(compile)
  const allow = rules.allow.map(compile)
  const pieces = [command.trim(), ...command.split(/&&|\|\||[;|&\n]/).map((piece) => piece.trim()).filter((piece) => piece !== '')]
  for (const piece of pieces) {
    const matched = deny.find((rule) => rule.test(piece))
    if (matched) return `${quoted(piece)} matches the deny pattern "${matched.pattern}"`
  }
  if (allow.length === 0) return undefined
  const loose = pieces.slice(1).find((piece) => !allow.some((rule) => rule.test(piece)))
  return loose === undefined ? undefined : `${quoted(loose)} matches no allow pattern (${rules.allow.map((p) => `"${p}"`).join(', ')})`
}

/** The most of a refused piece a reason repeats: the command is the model's, and may be a whole script. */
const MAX_QUOTED = 200

/** As a JSON string: a quote or line break in the piece cannot be read as the end of the quote. */
function quoted(piece: string): string {
  return JSON.stringify(shorten(piece, MAX_QUOTED))
}

/** Throws `COMMAND_DENIED` when `refusal` finds a reason. */
export function checkCommand(command: string, rules: CommandRules): void {
  const reason = refusal(command, rules)
  if (reason !== undefined) {
    throw new ReinError('COMMAND_DENIED', `this command is not allowed here: ${reason}. Do it another way, or ask the user`)
  }
}

function compile(pattern: string): { pattern: string; test: (text: string) => boolean } {
  const source = pattern.trim().split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*')
  const regex = new RegExp(`^${source}$`)
  return { pattern, test: (text) => regex.test(text) }
}
