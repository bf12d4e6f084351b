/** Prompt sections: plugins contribute parts of the system prompt in a fixed order. */

export interface PromptSectionContext {
  cwd: string
  sessionId: string
}

export interface PromptSection {
  /** Unique; ties in `order` break by id, so the text never depends on load order. */
  id: string
  order: number
  /** Nothing (or an empty string) leaves the section out. */
  render(context: PromptSectionContext): string | undefined
}

/** The system text: the agent's own, then each section, separated by blank lines. */
export function buildSystem(base: string | undefined, sections: readonly PromptSection[], context: PromptSectionContext): string {
  const ordered = [...sections].sort((a, b) => a.order - b.order || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  return [base, ...ordered.map((section) => section.render(context))].filter((part): part is string => typeof part === 'string' && part.trim() !== '').join('\n\n')
}
