/** Where OpenAI-compatible providers differ on the request side; DeepSeek supplies its own. */

import type { JsonValue } from '@rein/base'
import type { Message } from '@rein/llm'

/** Where an OpenAI-compatible provider's requests differ from OpenAI's. */
export interface OpenAiDialect {
  /** Request-body fields that express a reasoning effort (OpenAI: `reasoning_effort`). */
  effortFields(effort: string | undefined): Record<string, unknown>
  /**
   * Extra fields on an assistant message sent back in history (DeepSeek: `reasoning_content`). The
   * message's `source.replayState` tells whether this dialect produced it (see `replayState`).
   */
  assistantFields(message: Message): Record<string, unknown>
  /**
   * Put on every answer this dialect's adapter finishes (`finish.replayState`, which the caller stores
   * on the message source), so `assistantFields` can tell its own messages from another provider's.
   * The OpenAI dialect sets none.
   */
  readonly replayState?: JsonValue
  /**
   * The server refuses two user messages or two answers in a row, and a conversation that ends with
   * an answer (DeepSeek). Such runs are sent as one message each (texts joined by a blank line), and
   * an answer without calls at the end (a cut-off one a continued turn answers again) is left out.
   */
  readonly alternating?: boolean
}

/** OpenAI's own: `reasoning_effort`, no extra assistant fields, no replay mark. */
export const openAiDialect: OpenAiDialect = {
  effortFields: (effort) => (effort === undefined ? {} : { reasoning_effort: effort }),
  assistantFields: () => ({}),
}
