/**
 * The summary request: the range to fold in, as a plain transcript (so no call is ever sent without
 * its result, and no tools are offered), the previous summary to update, and fixed sections.
 */

import { cutHead, isReinError, messageOf } from '@rein/base'
import { BlockAssembler, userMessage, type ContentBlock, type LlmEvent, type LlmRuntime, type Message, type ModelRoute, type Resend } from '@rein/llm'
import type { LlmAttemptInput } from '../lifecycle.ts'
import { withoutLedger } from './ledger.ts'
import type { Tokenizer } from './meter.ts'

/** The summary request as lifecycle listeners see it: what was asked, and the answer as it stands when read. */
export interface SummaryExchange {
  readonly input: LlmAttemptInput
  readonly output: () => readonly ContentBlock[]
}

/** What the summary is written from. */
export interface SummaryPrompt {
  /** The summary this one updates, if the range starts with one. */
  previous?: string
  /** The range's other messages, as the model saw them. */
  messages: readonly Message[]
  /** The person's request the work in `messages` is on is left out (too long for the request); it stays word for word after the summary. */
  requestUnread?: boolean
  /** What a person asked the summary to keep (`/compact <instructions>`). */
  instructions?: string
}

/** What the summary request sends: the fixed instructions, and one user message holding the transcript. */
export interface SummaryInput {
  readonly system: string
  readonly messages: readonly Message[]
}

/** One summary request: where it goes, what it sends, its output budget, and who hears its attempts. */
export interface SummaryRequest {
  llm: LlmRuntime
  route: ModelRoute
  input: SummaryInput
  maxTokens: number
  /** Read before each attempt, under `maxTokens`: what the turn's budgets leave a retry (see `LlmRequest.maxTokensCap`). */
  maxTokensCap?: () => number | undefined
  tokens: Tokenizer
  signal: AbortSignal
  onEvent: (event: LlmEvent, exchange: SummaryExchange) => void
  /** Awaited before a retry or fallback of the summary request is sent (see `LlmRequest.beforeResend`). */
  beforeResend: (next: Resend) => Promise<void>
}

export type SummaryOutcome = { ok: true; text: string } | { ok: false; code: string; message: string }

const SYSTEM = [
  'You write the summary that replaces the early part of a coding agent\'s conversation, so that the agent can go on without it.',
  'Write only these sections, in this order, in Markdown:',
  '## Goal: what the person asked for (their words where they matter) and any later change to it.',
  '## Decisions: what was decided or found out that later work depends on: facts, approaches chosen or ruled out, constraints.',
  '## Open tasks: what is still to do, and what was in progress at the end.',
  '## Notes: anything else the agent will need: names, commands, errors to remember.',
  'Be specific and brief: exact names, paths and numbers. Leave out the list of files read or written: it is added to your summary from the log.',
].join('\n')

/** Characters of one tool result or argument list kept in the transcript. */
const RESULT_CHARS = 1_500
const ARGS_CHARS = 300

/** The request a summary is asked with, built once: the log records its size before it is sent. */
export function summaryInput(prompt: SummaryPrompt): SummaryInput {
  return { system: SYSTEM, messages: [userMessage(promptOf(prompt))] }
}

/** Sends the summary request and reads its answer as a summary; failures are outcomes, not throws. */
export async function writeSummary(request: SummaryRequest): Promise<SummaryOutcome> {
  const assembler = new BlockAssembler()
  const { system, messages } = request.input
  // Only a telemetry sink that opted into content reads the output; blocks that cannot be built are left out.
  const exchange: SummaryExchange = { input: request.input, output: () => { try { return assembler.blocks() } catch { return [] } } }
  const onEvent = (event: LlmEvent) => request.onEvent(event, exchange)
  try {
    const cap = request.maxTokensCap ? { maxTokensCap: request.maxTokensCap } : {}
    for await (const chunk of request.llm.stream({ ...request.route, system, messages, maxTokens: request.maxTokens, ...cap, signal: request.signal, onEvent, beforeResend: request.beforeResend })) {
      assembler.push(chunk)
    }
  } catch (error) {
    return { ok: false, code: isReinError(error) ? error.code : 'SUMMARY_FAILED', message: messageOf(error) }
  }
  return outcomeOf(assembler, request)
}

function promptOf(request: SummaryPrompt): string {
  return [
    request.previous ? `The summary so far:\n\n${request.previous}\n\nThe conversation since, to fold into it:` : 'The conversation to summarize:',
    request.requestUnread ? '(The person\'s request this work is on is left out here, for room; it stays word for word after your summary.)' : '',
    request.messages.map(transcriptLine).join('\n\n'),
    request.instructions ? `The person asked this summary to keep in particular: ${request.instructions}` : '',
    request.previous ? 'Write the updated summary.' : 'Write the summary.',
  ].filter((part) => part !== '').join('\n\n')
}

/**
 * The tokenizer only estimates what the provider counts: a summary is refused as longer than its
 * output budget only when it is well past it, as from a provider that ignored `maxTokens`.
 */
const OVER_BUDGET = 2

/** The answer as a summary: its text without a copied ledger (rein adds its own), if it is one. */
function outcomeOf(assembler: BlockAssembler, request: SummaryRequest): SummaryOutcome {
  const finish = assembler.finish
  if (!finish || finish.reason === 'error' || finish.reason === 'aborted') {
    return { ok: false, code: finish?.failure?.code ?? 'SUMMARY_FAILED', message: finish?.failure?.message ?? 'the summary request ended without an answer' }
  }
  if (finish.reason === 'max-tokens') return { ok: false, code: 'SUMMARY_TOO_LONG', message: `the summary did not fit in ${request.maxTokens} output tokens` }
  const text = withoutLedger(assembler.blocks().map((block) => (block.type === 'text' ? block.text : '')).join(''))
  if (text === '') return { ok: false, code: 'SUMMARY_EMPTY', message: 'the summary request answered with no text besides any copy of the file list' }
  const counted = request.tokens(text)
  if (counted > request.maxTokens * OVER_BUDGET) {
    return { ok: false, code: 'SUMMARY_TOO_LONG', message: `the summary is about ${counted} tokens, far more than the ${request.maxTokens} output tokens it was allowed` }
  }
  return { ok: true, text }
}

/** Tokens of the request around the transcript: the instructions, the previous summary, what is asked. */
export function summaryOverhead(tokens: Tokenizer, previous: string | undefined, instructions: string | undefined): number {
  return tokens(SYSTEM) + (previous ? tokens(previous) : 0) + (instructions ? tokens(instructions) : 0) + 100
}

/** One message as transcript lines: results and arguments clipped, text whole (the range is cut to fit). */
export function transcriptLine(message: Message): string {
  const who = message.source.kind === 'tool' ? 'TOOL' : message.role === 'assistant' ? 'ASSISTANT' : 'USER'
  const parts = message.content.map((block) => {
    switch (block.type) {
      case 'text':
        return block.text
      case 'reasoning':
        return ''
      case 'image':
        return '[an image]'
      case 'tool-call':
        return `[called ${block.name} ${clip(block.arguments, ARGS_CHARS)} as ${block.id}]`
      case 'tool-result':
        return `[result of ${block.toolCallId}${block.isError ? ', an error' : ''}] ${clip(block.content.map((part) => (part.type === 'text' ? part.text : '[an image]')).join('\n'), RESULT_CHARS)}`
    }
  }).filter((part) => part !== '')
  return `${who}: ${parts.join('\n')}`
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text
  const shown = cutHead(text, max)
  return `${shown}… [${text.length - shown.length} more characters]`
}
