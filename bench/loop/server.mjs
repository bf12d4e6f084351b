// @ts-check
/**
 * The mock OpenAI chat-completions server every harness in the loop benchmark talks to. One process
 * (the runner's) serves all harness processes, so each gets byte-identical answers:
 *
 * - a request whose last message is the user's gets `calls` streamed tool calls to `lookup`;
 * - a request whose last message is a tool result gets a short streamed answer.
 *
 * A harness's base URL is `http://127.0.0.1:<port>/<run>/<calls>/v1`: `run` names the process the
 * figures belong to, `calls` how many parallel calls each turn asks for. Per run the server records
 * when the first request arrived (startup), how many requests came and how many were wrong (a tool
 * result missing or not the one asked for), and request-prefix stability: for each request after the
 * first of a conversation, the share of the previous request's prompt it repeats as an exact prefix.
 * The prompt is rendered the way a chat template would (tools, then each message's role, text, tool
 * calls and call id), so harnesses that spell the same JSON differently are compared fairly.
 */

import { createServer } from 'node:http'

/** Per-run figures. */
export class RunStats {
  firstRequestAt = 0
  requests = 0
  wrong = 0
  /** Sum and count of prefix shares, and the lowest one seen. */
  prefixSum = 0
  prefixCount = 0
  prefixMin = 1
  /** @type {Map<string, string>} the last rendered prompt per conversation (keyed by its first user message) */
  last = new Map()
}

/** @param {unknown} content */
function text(content) {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('')
  return ''
}

/** @param {any} body */
function render(body) {
  const tools = (body.tools ?? []).map((/** @type {any} */ tool) => `${tool.function?.name}:${tool.function?.description}:${JSON.stringify(tool.function?.parameters)}`).join('\n')
  const messages = (body.messages ?? []).map((/** @type {any} */ message) => {
    const calls = (message.tool_calls ?? []).map((/** @type {any} */ call) => `${call.id}:${call.function?.name}:${call.function?.arguments}`).join('|')
    return `<${message.role}>${text(message.content)}${calls ? `[${calls}]` : ''}${message.tool_call_id ? `(${message.tool_call_id})` : ''}`
  })
  return `${tools}\n${messages.join('\n')}`
}

/** @param {string} a @param {string} b */
function commonPrefix(a, b) {
  const limit = Math.min(a.length, b.length)
  let i = 0
  while (i < limit && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

/** @param {RunStats} stats @param {any} body */
function recordPrefix(stats, body) {
  const firstUser = (body.messages ?? []).find((/** @type {any} */ message) => message.role === 'user')
  const key = text(firstUser?.content)
  const prompt = render(body)
  const previous = stats.last.get(key)
  if (previous !== undefined) {
    const share = commonPrefix(previous, prompt) / previous.length
    stats.prefixSum += share
    stats.prefixCount++
    stats.prefixMin = Math.min(stats.prefixMin, share)
  }
  stats.last.set(key, prompt)
}

const frame = (/** @type {unknown} */ data) => `data: ${JSON.stringify(data)}\n\n`

/** The SSE events of one answer: role, the deltas, the finish, usage, [DONE]. */
function events(/** @type {string} */ id, /** @type {object[]} */ deltas, /** @type {string} */ finish, /** @type {boolean} */ usage) {
  const base = { id, object: 'chat.completion.chunk', created: 1_700_000_000, model: 'bench-model' }
  const chunk = (/** @type {object} */ delta, /** @type {string | null} */ reason = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: reason }] })
  const out = [frame(chunk({ role: 'assistant', content: '' })), ...deltas.map((delta) => frame(chunk(delta)))]
  out.push(frame(chunk({}, finish)))
  if (usage) out.push(frame({ ...base, choices: [], usage: { prompt_tokens: 120, completion_tokens: 12, total_tokens: 132 } }))
  out.push('data: [DONE]\n\n')
  return out
}

/** @param {number} calls @param {number} n */
function toolCallEvents(calls, n, /** @type {boolean} */ usage) {
  const deltas = []
  for (let k = 0; k < calls; k++) {
    deltas.push({ tool_calls: [{ index: k, id: `call_${n}_${k}`, type: 'function', function: { name: 'lookup', arguments: '' } }] })
    deltas.push({ tool_calls: [{ index: k, function: { arguments: '{"key":' } }] })
    deltas.push({ tool_calls: [{ index: k, function: { arguments: `"k${k}"}` } }] })
  }
  return events(`chatcmpl-${n}`, deltas, 'tool_calls', usage)
}

function answerEvents(/** @type {number} */ n, /** @type {boolean} */ usage) {
  const words = ['Done', ':', ' the', ' values', ' are', ' in', '.']
  return events(`chatcmpl-${n}`, words.map((content) => ({ content })), 'stop', usage)
}

/** A non-streamed completion carrying the same answer, for a harness that does not stream. */
function completion(/** @type {number} */ n, /** @type {number} */ calls, /** @type {boolean} */ answer) {
  const message = answer
    ? { role: 'assistant', content: 'Done: the values are in.' }
    : { role: 'assistant', content: null, tool_calls: Array.from({ length: calls }, (_, k) => ({ id: `call_${n}_${k}`, type: 'function', function: { name: 'lookup', arguments: `{"key":"k${k}"}` } })) }
  return { id: `chatcmpl-${n}`, object: 'chat.completion', created: 1_700_000_000, model: 'bench-model', choices: [{ index: 0, message, finish_reason: answer ? 'stop' : 'tool_calls' }], usage: { prompt_tokens: 120, completion_tokens: 12, total_tokens: 132 } }
}

/** Whether the tool results since the last assistant message answer its calls with `lookup`'s value. */
function toolResultsRight(/** @type {any[]} */ messages) {
  let i = messages.length
  while (i > 0 && messages[i - 1].role === 'tool') i--
  const asked = messages[i - 1]?.tool_calls ?? []
  const results = messages.slice(i)
  if (results.length !== asked.length) return false
  return asked.every((/** @type {any} */ call) => {
    const result = results.find((message) => message.tool_call_id === call.id)
    const key = JSON.parse(call.function.arguments).key
    return result !== undefined && text(result.content).includes(`value of ${key}`)
  })
}

/**
 * Starts the server on a loopback port.
 * @returns {Promise<{ url: string, stats: (run: string) => RunStats, close: () => Promise<void> }>}
 */
export async function startMockServer() {
  /** @type {Map<string, RunStats>} */
  const runs = new Map()
  const statsOf = (/** @type {string} */ run) => {
    let stats = runs.get(run)
    if (!stats) runs.set(run, (stats = new RunStats()))
    return stats
  }
  let served = 0
  const server = createServer((request, response) => {
    const arrived = performance.timeOrigin + performance.now()
    const match = /^\/([^/]+)\/(\d+)\/v1\/chat\/completions$/.exec(request.url ?? '')
    /** @type {Buffer[]} */
    const parts = []
    request.on('data', (part) => parts.push(part))
    request.on('end', () => {
      if (!match || request.method !== 'POST') {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${request.method} ${request.url}` } }))
        return
      }
      const stats = statsOf(match[1] ?? '')
      if (stats.requests === 0) stats.firstRequestAt = arrived
      stats.requests++
      const body = JSON.parse(Buffer.concat(parts).toString('utf8'))
      recordPrefix(stats, body)
      const messages = body.messages ?? []
      const answer = messages.at(-1)?.role === 'tool'
      if (answer && !toolResultsRight(messages)) stats.wrong++
      const n = served++
      const calls = Number(match[2])
      if (body.stream !== true) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(completion(n, calls, answer)))
        return
      }
      const usage = body.stream_options?.include_usage === true
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
      for (const event of answer ? answerEvents(n, usage) : toolCallEvents(calls, n, usage)) response.write(event)
      response.end()
    })
  })
  server.on('connection', (socket) => socket.setNoDelay(true))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the mock server has no port')
  return {
    url: `http://127.0.0.1:${address.port}`,
    stats: statsOf,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
  }
}
