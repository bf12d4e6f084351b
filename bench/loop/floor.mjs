// @ts-check
/**
 * The floor: the least a harness can do. `fetch`, eventsource-parser, JSON.parse per event, the tool
 * calls assembled from their deltas and called directly, history kept in an array. No validation,
 * no persistence, no retries: every harness is measured as a multiple of this.
 */

import { EventSourceParserStream } from 'eventsource-parser/stream'
import { API_KEY, MODEL, SYSTEM, TOOL_DESCRIPTION, TOOL_NAME, TOOL_PARAMETERS, args, lookup, runLoop } from './common.mjs'

const { baseURL, scenario, turns } = args()
const tools = [{ type: 'function', function: { name: TOOL_NAME, description: TOOL_DESCRIPTION, parameters: TOOL_PARAMETERS } }]

/** One streamed request: the text and the tool calls it answered with. */
async function complete(/** @type {object[]} */ messages) {
  const response = await fetch(`${baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ model: MODEL, messages, tools, stream: true, stream_options: { include_usage: true } }),
  })
  if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`)
  let content = ''
  /** @type {{ id: string, name: string, arguments: string }[]} */
  const calls = []
  const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream())
  for await (const event of events) {
    if (event.data === '[DONE]') break
    const delta = JSON.parse(event.data).choices[0]?.delta
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
  /** @type {object[]} */
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
