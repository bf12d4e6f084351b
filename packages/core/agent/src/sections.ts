/** Prompt sections: plugins contribute parts of the system prompt in a fixed order. */

import type { RunIdentity } from '@rein/tools'

/** What a section may render from: where the agent works and which run (agent, depth) it renders for. */
export interface PromptSectionContext {
  cwd: string
  workspaceRoot: string
  sessionId: string
  identity: RunIdentity
  /** The turn's signal: a section that looks something up stops when the turn is cancelled. */
  signal: AbortSignal
}

/** A part of the system prompt a plugin adds, ordered by `order` then id. */
export interface PromptSection {
  /** Unique; ties in `order` break by id, so the text never depends on load order. */
  id: string
  order: number
  /**
   * Rendered once per session: the first text is recorded in the request header and read back from
   * the log for every later request, after a resume too, so it cannot change under a session.
   */
  pinned?: boolean
  /** Nothing (or an empty string) leaves the section out. May look something up (a promise). */
  render(context: PromptSectionContext): string | undefined | Promise<string | undefined>
}

/** Section texts pinned in a session, by id. */
export type Pins = ReadonlyMap<string, string>

/**
 * The system text: the agent's own, then each section, separated by blank lines. A pinned section
 * reads its text from `pins`; one rendered for the first time is returned in `fresh`, to record.
 */
export async function buildSystem(base: string | undefined, sections: readonly PromptSection[], context: PromptSectionContext, pins: Pins = new Map()): Promise<{ system: string; fresh: Record<string, string> }> {
  const ordered = [...sections].sort((a, b) => a.order - b.order || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const fresh: Record<string, string> = {}
  const texts = await Promise.all(ordered.map(async (section) => {
    if (!section.pinned) return section.render(context)
    const pinned = pins.get(section.id)
    if (pinned !== undefined) return pinned
    const text = await section.render(context) ?? ''
    fresh[section.id] = text
    return text
  }))
  const system = [base, ...texts].filter((part): part is string => typeof part === 'string' && part.trim() !== '').join('\n\n')
  return { system, fresh }
}
