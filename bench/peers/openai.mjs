// @ts-check
/**
 * The openai SDK loop (`openai` 6.x): `client.chat.completions.create({ stream: true })` iterated with
 * the SDK's own SSE stream, the tool calls assembled from their deltas as in floor.mjs and called
 * directly, history kept in an array. A plain hand-written loop, not `runTools`: this is what a user
 * of the bare SDK writes, so it measures the SDK's client and stream against the floor's fetch.
 *
 * On: streaming, `stream_options.include_usage` (same request as the floor), the SDK's defaults
 * (2 retries, 10 min timeout). Off: nothing to turn off (the SDK has no telemetry or persistence).
 */

import OpenAI from 'openai'
import { API_KEY, MODEL, SYSTEM, TOOL_DESCRIPTION, TOOL_NAME, TOOL_PARAMETERS, args, lookup, runLoop } from '../loop/common.mjs'

const { baseURL, scenario, turns } = args()
const client = new OpenAI({ baseURL, apiKey: API_KEY })
/** @type {import('openai/resources/chat/completions').ChatCompletionTool[]} */
const tools = [{ type: 'function', function: { name: TOOL_NAME, description: TOOL_DESCRIPTION, parameters: TOOL_PARAMETERS } }]

/** One streamed request: the text and the tool calls it answered with. */
async function complete(/** @type {import('openai/resources/chat/completions').ChatCompletionMessageParam[]} */ messages) {
  const stream = await client.chat.completions.create({ model: MODEL, messages, tools, stream: true, stream_options: { include_usage: true } })
  let content = ''
  /** @type {{ id: string, name: string, arguments: string }[]} */
  const calls = []
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta
    if (!delta) continue
    if (delta.content) content += delta.content
    for (const part of delta.tool_calls ?? []) {
      const call = (calls[part.index] ??= { id: '', name: '', arguments: '' })
      if (part.id) call.id = part.id
      if (part.function?.name) call.name = part.function.name
      if (part.function?.arguments) call.arguments += part.function.arguments
    }
  }
  return { content, calls }
}

const conversation = async () => {
  /** @type {import('openai/resources/chat/completions').ChatCompletionMessageParam[]} */
  const messages = [{ role: 'system', content: SYSTEM }]
  return {
    send: async (/** @type {string} */ text) => {
      messages.push({ role: 'user', content: text })
      for (;;) {
        const { content, calls } = await complete(messages)
        if (calls.length === 0) {
          messages.push({ role: 'assistant', content })
          return content
        }
        messages.push({ role: 'assistant', content: null, tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) })
        for (const call of calls) messages.push({ role: 'tool', tool_call_id: call.id, content: lookup(JSON.parse(call.arguments).key) })
      }
    },
  }
}

await runLoop({ scenario, turns, conversation })
