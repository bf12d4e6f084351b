// @ts-check
/**
 * The floor: the bare loop issue #16 names. `fetch`, eventsource-parser, JSON.parse per event, the
 * tool calls assembled from their deltas and called directly, history kept in an array. No
 * validation, no persistence, no retries: every harness is measured as a multiple of this. The
 * same loop over `node:http` (floor-http.mjs) costs less: on Node 20 fetch is not the cheapest transport.
 */

import { EventSourceParserStream } from 'eventsource-parser/stream'
import { API_KEY, MODEL, TOOL_DESCRIPTION, TOOL_NAME, TOOL_PARAMETERS, addDelta, args, handWrittenLoop, runLoop } from './common.mjs'

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
  const answer = { content: '', calls: /** @type {import('./common.mjs').AssembledCall[]} */ ([]) }
  const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream())
  for await (const event of events) {
    if (event.data === '[DONE]') break
    const delta = JSON.parse(event.data).choices[0]?.delta
    if (delta) addDelta(answer, delta)
  }
  return answer
}

const conversation = handWrittenLoop(complete)

await runLoop({ scenario, turns, conversation })
