/**
 * DeepSeek's differences on the request side (https://api-docs.deepseek.com): thinking is switched by
 * `thinking: {type}` with `reasoning_effort`, and an assistant turn's `reasoning_content` must be sent
 * back — the API rejects a tool-call turn without it in thinking mode. Only reasoning DeepSeek itself
 * produced goes back: answers this dialect finished carry `replayState: {dialect: 'deepseek'}`.
 */

import type { Message } from '@rein/llm'
import type { OpenAiDialect } from '@rein/llm-openai'

/** Reasoning efforts of DeepSeek's thinking models, weakest first. `off` disables thinking. */
export const DEEPSEEK_EFFORTS = ['off', 'low', 'high', 'max'] as const

/** True for a message a DeepSeek answer produced (its source carries this dialect's mark). */
function producedHere(message: Message): boolean {
  const { source } = message
  if (source.kind !== 'model') return false
  const state = source.replayState
  return typeof state === 'object' && state !== null && !Array.isArray(state) && (state as { dialect?: unknown }).dialect === 'deepseek'
}

/** DeepSeek's `OpenAiDialect`: effort as `thinking` + `reasoning_effort`, its own reasoning sent back as `reasoning_content`. */
export const deepSeekDialect: OpenAiDialect = {
  replayState: { dialect: 'deepseek' },
  // "does not support successive user or assistant messages"; "the last message … must be a user message".
  alternating: true,
  effortFields(effort) {
    if (effort === undefined) return {}
    if (effort === 'off') return { thinking: { type: 'disabled' } }
    return { thinking: { type: 'enabled' }, reasoning_effort: effort }
  },
  assistantFields(message: Message) {
    // Another provider's reasoning is not DeepSeek's to replay: it would be read as DeepSeek's own.
    const reasoning = producedHere(message) ? message.content.filter((block) => block.type === 'reasoning').map((block) => block.text) : []
    if (reasoning.length > 0) return { reasoning_content: reasoning.join('') }
    // A tool-call turn must carry the field even when it had no reasoning (or it was not ours).
    return message.content.some((block) => block.type === 'tool-call') ? { reasoning_content: '' } : {}
  },
}
