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
import { API_KEY, MODEL, TOOL_DESCRIPTION, TOOL_NAME, TOOL_PARAMETERS, addDelta, args, handWrittenLoop, runLoop } from '../loop/common.mjs'

const { baseURL, scenario, turns } = args()
const client = new OpenAI({ baseURL, apiKey: API_KEY })
/** @type {import('openai/resources/chat/completions').ChatCompletionTool[]} */
const tools = [{ type: 'function', function: { name: TOOL_NAME, description: TOOL_DESCRIPTION, parameters: TOOL_PARAMETERS } }]

/** One streamed request: the text and the tool calls it answered with. */
async function complete(/** @type {import('openai/resources/chat/completions').ChatCompletionMessageParam[]} */ messages) {
  const stream = await client.chat.completions.create({ model: MODEL, messages, tools, stream: true, stream_options: { include_usage: true } })
  const answer = { content: '', calls: /** @type {import('../loop/common.mjs').AssembledCall[]} */ ([]) }
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta
    if (delta) addDelta(answer, delta)
  }
  return answer
}

const conversation = handWrittenLoop(complete)

await runLoop({ scenario, turns, conversation })
