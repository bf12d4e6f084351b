/** Where OpenAI-compatible providers differ on the request side; DeepSeek supplies its own. */

import type { Message } from '@rein/llm'

export interface OpenAiDialect {
  /** Request-body fields that express a reasoning effort (OpenAI: `reasoning_effort`). */
  effortFields(effort: string | undefined): Record<string, unknown>
  /** Extra fields on an assistant message sent back in history (DeepSeek: `reasoning_content`). */
  assistantFields(message: Message): Record<string, unknown>
}

export const openAiDialect: OpenAiDialect = {
  effortFields: (effort) => (effort === undefined ? {} : { reasoning_effort: effort }),
  assistantFields: () => ({}),
}
