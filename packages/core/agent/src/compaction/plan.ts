/**
 * What a compaction would change, chosen from the messages as the model sees them: which tool
 * results to prune, and which range to summarize. Pure; nothing is written here.
 */

import { messageTokens, type Message, type Tokenizer } from '@rein/llm'
import { argumentsStub, prunedStub } from '@rein/session'

/** A message with the seq of the event it came from. */
export interface Entry {
  seq: number
  message: Message
}

/** A result, or a call's arguments, the model would see as a stub. */
export interface Pruned {
  part: 'result' | 'arguments'
  callId: string
  name: string
  chars: number
  /** Tokens the stub saves. */
  saves: number
}

/** Index of the first message of the last `turns` user turns (a person's messages start turns). */
export function tailStart(entries: readonly Entry[], turns: number): number {
  let seen = 0
  for (let index = entries.length - 1; index >= 0; index--) {
    if (entries[index]!.message.source.kind !== 'user') continue
    if (++seen === turns) return index
  }
  return 0
}

/**
 * Tool results older than the most recent `keepTokens` of tool output and before `protectFrom`
 * (the kept user turns), and likewise calls' arguments (the most recent `keepTokens` of them kept):
 * those whose stub is shorter than what it replaces.
 */
export function planPrune(entries: readonly Entry[], protectFrom: number, keepTokens: number, tokens: Tokenizer): Pruned[] {
  const names = callNames(entries)
  const pruned: Pruned[] = []
  const recent = { result: 0, arguments: 0 }
  const consider = (index: number, part: Pruned['part'], callId: string, text: string, stub: (entry: Omit<Pruned, 'saves' | 'part'>) => string) => {
    const size = tokens(text)
    recent[part] += size
    if (recent[part] <= keepTokens || index >= protectFrom || (part === 'result' && isStub(text))) return
    const entry = { callId, name: names.get(callId) ?? 'tool', chars: text.length }
    const saves = size - tokens(stub(entry))
    if (saves > 0) pruned.push({ part, ...entry, saves })
  }
  for (let index = entries.length - 1; index >= 0; index--) {
    for (const block of entries[index]!.message.content) {
      if (block.type === 'tool-call') consider(index, 'arguments', block.id, block.arguments, () => argumentsStub(block.arguments))
      else if (block.type === 'tool-result') consider(index, 'result', block.toolCallId, block.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n'), prunedStub)
    }
  }
  return pruned.reverse()
}

/**
 * The range a summary replaces, as indexes `[from, to)`: from a previous summary (which the new one
 * updates) or the message after the session's first user message (kept verbatim), to the start of
 * the kept tail. A cut falls only before an assistant message or a person's message, so a call is
 * never separated from its result. When the kept turns leave nothing to summarize (one long turn),
 * the tail shrinks to the last two answers if `reachIntoTail` allows. Undefined when there is no range.
 */
export function summaryRange(entries: readonly Entry[], keepTurns: number, reachIntoTail: boolean): { from: number; to: number } | undefined {
  const firstUser = entries.findIndex((entry) => entry.message.source.kind === 'user')
  if (firstUser === -1) return undefined
  const previous = entries.findIndex((entry) => isSummary(entry.message))
  const from = previous !== -1 ? previous : firstUser + 1
  let to = tailStart(entries, keepTurns)
  if (reachIntoTail && !hasNew(entries, from, to)) to = nthAnswerFromEnd(entries, 2)
  return hasNew(entries, from, to) ? { from, to } : undefined
}

/** Whether `[from, to)` holds a message that is not already a summary. */
function hasNew(entries: readonly Entry[], from: number, to: number): boolean {
  for (let index = from; index < to; index++) if (!isSummary(entries[index]!.message)) return true
  return false
}

/** Whether the range may end before `index`: an answer or a person's message (a result is never parted from its call). */
export function isCut(entries: readonly Entry[], index: number): boolean {
  const { message } = entries[index]!
  return message.role === 'assistant' || message.source.kind === 'user'
}

/**
 * A later end for the range when the kept tail alone is over `maxTail` tokens: the first cut after
 * `to` that leaves at most that, but never past the last two answers.
 */
export function deepen(entries: readonly Entry[], to: number, maxTail: number, tokens: Tokenizer): number {
  const last = nthAnswerFromEnd(entries, 2)
  let tail = 0
  const tails: number[] = Array.from({ length: entries.length + 1 }, () => 0)
  for (let index = entries.length - 1; index >= 0; index--) tails[index] = tail += messageTokens(tokens, [entries[index]!.message])
  let cut = to
  while (cut < last && tails[cut]! > maxTail) {
    let next = cut + 1
    while (next < last && !isCut(entries, next)) next++
    cut = next
  }
  return cut
}

/** Index of the `n`-th last assistant message, or 0. */
function nthAnswerFromEnd(entries: readonly Entry[], n: number): number {
  let seen = 0
  for (let index = entries.length - 1; index >= 0; index--) {
    if (entries[index]!.message.role === 'assistant' && ++seen === n) return index
  }
  return 0
}

/** Whether a message is a compaction's summary. */
export function isSummary(message: Message): boolean {
  return message.source.kind === 'plugin' && message.source.plugin === 'compaction'
}

function isStub(text: string): boolean {
  return text.startsWith('[') && text.includes('result pruned to save context')
}

/** Tool names by call id, from the assistant messages' tool calls. */
function callNames(entries: readonly Entry[]): Map<string, string> {
  const names = new Map<string, string>()
  for (const { message } of entries) {
    for (const block of message.content) if (block.type === 'tool-call') names.set(block.id, block.name)
  }
  return names
}
