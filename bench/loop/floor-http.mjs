// @ts-check
/**
 * The floor over `node:http` instead of `fetch`: the same bare loop (eventsource-parser, JSON.parse
 * per event, the calls assembled and called directly, history in an array) on the transport rein's
 * adapter uses. Not a ratio's denominator: it shows what part of rein's lead over the floor is the
 * transport alone.
 */

import { Agent, request } from 'node:http'
import { createParser } from 'eventsource-parser'
import { API_KEY, MODEL, TOOL_DESCRIPTION, TOOL_NAME, TOOL_PARAMETERS, addDelta, args, handWrittenLoop, runLoop } from './common.mjs'

const { baseURL, scenario, turns } = args()
const tools = [{ type: 'function', function: { name: TOOL_NAME, description: TOOL_DESCRIPTION, parameters: TOOL_PARAMETERS } }]
const agent = new Agent({ keepAlive: true })

/** One streamed request: the text and the tool calls it answered with. */
function complete(/** @type {object[]} */ messages) {
  const body = JSON.stringify({ model: MODEL, messages, tools, stream: true, stream_options: { include_usage: true } })
  const answer = { content: '', calls: /** @type {import('./common.mjs').AssembledCall[]} */ ([]) }
  return new Promise((resolve, reject) => {
    const parser = createParser({
      onEvent: (event) => {
        if (event.data === '[DONE]') return
        const delta = JSON.parse(event.data).choices[0]?.delta
        if (delta) addDelta(answer, delta)
      },
    })
    const outgoing = request(`${baseURL}/chat/completions`, {
      method: 'POST', agent,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}`, 'content-length': Buffer.byteLength(body) },
    }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`HTTP ${response.statusCode}`))
      response.setEncoding('utf8')
      response.on('data', (/** @type {string} */ text) => parser.feed(text))
      response.on('end', () => resolve(answer))
      response.on('error', reject)
    })
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

const conversation = handWrittenLoop(complete)

await runLoop({ scenario, turns, conversation })
