/**
 * DeepSeek's differences on the request side (https://api-docs.deepseek.com): thinking is switched by
 * `thinking: {type}` with `reasoning_effort`, and an assistant turn's `reasoning_content` must be sent
 * back — the API rejects a tool-call turn without it in thinking mode.
 */

import type { Message } from '@rein/llm'
import type { OpenAiDialect } from '@rein/llm-openai'

/** Reasoning efforts of DeepSeek's thinking models, weakest first. `off` disables thinking. */
export const DEEPSEEK_EFFORTS = ['off', 'low', 'high', 'max'] as const

export const deepSeekDialect: OpenAiDialect = {
  effortFields(effort) {
    if (effort === undefined) return {}
    if (effort === 'off') return { thinking: { type: 'disabled' } }
    return { thinking: { type: 'enabled' }, reasoning_effort: effort }
  },
  assistantFields(message: Message) {
    const reasoning = message.content.filter((block) => block.type === 'reasoning').map((block) => block.text)
    if (reasoning.length > 0) return { reasoning_content: reasoning.join('') }
    // A tool-call turn must carry the field even when it had no reasoning.
    return message.content.some((block) => block.type === 'tool-call') ? { reasoning_content: '' } : {}
  },
}
