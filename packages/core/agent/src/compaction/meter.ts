/**
 * The context meter: how many input tokens the next request will be, before it is sent. The last
 * answered request's reported input, plus an estimate of what was appended since; the whole
 * request estimated when there is no report to start from (a resume, a compaction, a new system).
 */

import type { ContentBlock, Message, TokenUsage } from '@rein/llm'
import type { ToolSchema } from '@rein/tools'

/** Counts the tokens of a text; the default is a character heuristic (see `charTokens`). */
export type Tokenizer = (text: string) => number

/**
 * `tokenizer`'s counts as whole, non-negative numbers, as the log records them: rounded up; the
 * character heuristic for a text it gives no such count for (NaN, a negative, not a number).
 */
export function wholeTokens(tokenizer: Tokenizer): Tokenizer {
  return (text) => {
    const count = tokenizer(text)
    return Number.isFinite(count) && count >= 0 ? Math.ceil(count) : charTokens(text)
  }
}

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

/** Tokens of a list of messages. */
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

/** Tokens of a whole request: system text, tool schemas and messages. */
export function requestTokens(tokens: Tokenizer, system: string, schemas: readonly ToolSchema[], messages: readonly Message[]): number {
  return tokens(system) + (schemas.length > 0 ? tokens(JSON.stringify(schemas)) : 0) + messageTokens(tokens, messages)
}

/** Total input of a reported usage (cached parts included). */
function inputOf(usage: TokenUsage): number {
  return usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0)
}

/** The last answered request: its reported input, and what it was sent with. */
interface Report {
  input: number
  messages: number
  /** The route that answered, the system text and the tool names: a request that differs is counted whole. */
  route: string
  system: string
  tools: string
}

/** The tool names of a schema list, once per list (the registry hands the same list while nothing changes). */
const toolNames = new WeakMap<readonly ToolSchema[], string>()
function namesOf(schemas: readonly ToolSchema[]): string {
  let names = toolNames.get(schemas)
  if (names === undefined) toolNames.set(schemas, names = schemas.map((schema) => schema.name).join(','))
  return names
}

/** One per agent: remembers the last report, forgets it when the messages were rewritten. */
export class ContextMeter {
  private report: Report | undefined

  /** The request just answered (by `route`, after any fallback) reported `usage` for these parts. */
  observe(usage: TokenUsage | undefined, route: string, system: string, schemas: readonly ToolSchema[], messages: number): void {
    this.report = usage ? { input: inputOf(usage), messages, route, system, tools: namesOf(schemas) } : undefined
  }

  /** The messages were rewritten (a compaction): the report no longer describes a prefix of them. */
  forget(): void {
    this.report = undefined
  }

  /** The next request's input tokens, for `route`. */
  estimate(tokens: Tokenizer, route: string, system: string, schemas: readonly ToolSchema[], messages: readonly Message[]): number {
    const report = this.report
    // Same route, system and tools, and the messages only grew: the report plus what was appended.
    if (report && report.route === route && report.system === system && report.tools === namesOf(schemas) && report.messages <= messages.length) {
      return report.input + messageTokens(tokens, messages.slice(report.messages))
    }
    return requestTokens(tokens, system, schemas, messages)
  }
}
