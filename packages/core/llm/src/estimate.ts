/**
 * Token estimates without a provider's count: what an attempt that ended unheard is charged, and
 * what an agent's context meter starts from. One heuristic for both, so a request cancelled live
 * and the same request cut off by a kill are charged alike.
 */

import type { ContentBlock, Message } from './message.ts'

/** Counts the tokens of a text; the default is a character heuristic (see `charTokens`). */
export type Tokenizer = (text: string) => number

/**
 * The default tokenizer: one token per 4 characters, rounded up. English prose and code run 3.5–4.5
 * characters a token in the tokenizers of the common models, so this is a fair middle; CJK text
 * runs nearer 1–1.5, so it under-counts there (a tokenizer can be plugged in).
 */
export const charTokens: Tokenizer = (text) => Math.ceil(text.length / 4)

/** What framing each message adds (role, separators), in tokens. */
const PER_MESSAGE = 4
/** An image, whatever its size: a typical tile count. */
const PER_IMAGE = 800

/** Tokens of a list of messages: what the model reads of them, not their ids or sources. */
export function messageTokens(tokens: Tokenizer, messages: readonly Message[]): number {
  let total = 0
  for (const message of messages) {
    total += PER_MESSAGE
    for (const block of message.content) total += blockTokens(tokens, block)
  }
  return total
}

function blockTokens(tokens: Tokenizer, block: ContentBlock): number {
  switch (block.type) {
    case 'text':
    case 'reasoning':
      return tokens(block.text)
    case 'image':
      return PER_IMAGE
    case 'tool-call':
      return tokens(block.name) + tokens(block.arguments)
    case 'tool-result':
      return block.content.reduce((sum, part) => sum + (part.type === 'text' ? tokens(part.text) : PER_IMAGE), 0)
  }
}

/** Tokens of a whole request's input: its system text, its tool definitions and its messages. */
export function inputTokens(tokens: Tokenizer, input: { system?: string | undefined; tools?: readonly unknown[] | undefined; messages: readonly Message[] }): number {
  return tokens(input.system ?? '') + (input.tools && input.tools.length > 0 ? tokens(JSON.stringify(input.tools)) : 0) + messageTokens(tokens, input.messages)
}
