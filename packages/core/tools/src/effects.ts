/** What a tool may do to the world, and the defaults that follow from it: approval and replay safety. */

/** `read`: looks at files or state; `write`: changes files; `exec`: runs programs; `network`: talks to other machines. */
export type ToolEffect = 'read' | 'write' | 'exec' | 'network'

/** Every effect a tool may declare, for checking a list of them. */
export const TOOL_EFFECTS: readonly ToolEffect[] = Object.freeze(['read', 'write', 'exec', 'network'])

/** The effects a call needs approval for unless the registry's `askFor` says otherwise: the coding agents' convention. */
export const ASK_FOR_BY_DEFAULT: readonly ToolEffect[] = Object.freeze(['write', 'exec'])

const PHRASES: Record<ToolEffect, string> = {
  read: 'reads files',
  write: 'changes files',
  exec: 'runs commands',
  network: 'uses the network',
}

export function isToolEffect(value: unknown): value is ToolEffect {
  return typeof value === 'string' && (TOOL_EFFECTS as readonly string[]).includes(value)
}

/**
 * Replay safety when the tool does not say: only a tool that declared its effects and may only
 * read is safe to run again after a crash. An undeclared tool is pure for approval, but nothing
 * proves it may be repeated.
 */
export function defaultReplaySafe(declared: readonly ToolEffect[] | undefined): boolean {
  return declared !== undefined && declared.every((effect) => effect === 'read')
}

/** What a call needing approval does, as a question or a denial says it: "it changes files and runs commands". */
export function describeEffects(effects: readonly ToolEffect[]): string {
  const phrases = effects.map((effect) => PHRASES[effect])
  return `it ${phrases.length > 1 ? `${phrases.slice(0, -1).join(', ')} and ${phrases.at(-1)}` : phrases[0] ?? 'has no effects'}`
}
