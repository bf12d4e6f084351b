/**
 * Chat-completions event streams as an OpenAI-compatible server sends them, and the same streams
 * damaged: JSON-level (wrong shapes, prototype keys, invalid JSON, giant lines) and byte-level
 * (cut, duplicated, swapped, flipped, invalid UTF-8), split across reads at random places.
 */

import type { JsonValue } from '@rein/base'
import type { Rng } from '../plan.ts'
import { BYTE_MUTATIONS, mutateBytes, randomBytes, randomText, splitBytes } from './bytes.ts'
import { mutateJson, nestedText, randomJson } from './json.ts'

/** What the byte server sends for one request. */
export interface Served {
  status: number
  contentType?: string
  /** The body, in the pieces it is written in (each its own socket write, a tick apart). */
  chunks: Uint8Array[]
  /**
   * `end`: a clean end; `destroy`: the socket is destroyed after the chunks; `stall`: the body
   * stays open and silent (the client's idle limit must end it); `stall-headers`: no response at all.
   */
  end: 'end' | 'destroy' | 'stall' | 'stall-headers'
  /** Appended after `chunks`: one `data:` line of this many bytes (bigger than any event rein accepts). */
  giantLine?: number
}

/** The payloads of a plausible answer: reasoning, text, tool calls with fragmented arguments, finish, usage. */
export function validPayloads(r: Rng, deepseek: boolean): JsonValue[] {
  const id = r.chance(0.9) ? `chatcmpl-${r.int(1e6)}` : undefined
  const head = { ...(id ? { id } : {}), object: 'chat.completion.chunk', model: r.pick(['gpt-test', 'deepseek-v4-flash']) }
  const choice = (delta: Record<string, JsonValue>, finish: string | null = null) => ({ ...head, choices: [{ index: 0, delta, finish_reason: finish }] })
  const out: JsonValue[] = []
  if (r.chance(0.7)) out.push(choice({ role: 'assistant', content: '' }))
  if (r.chance(0.4)) for (let i = 0, n = 1 + r.int(4); i < n; i++) out.push(choice({ [deepseek || r.chance(0.5) ? 'reasoning_content' : 'reasoning']: randomText(r) }))
  if (r.chance(0.7)) for (let i = 0, n = 1 + r.int(6); i < n; i++) out.push(choice({ content: randomText(r) }))
  const calls = r.chance(0.4) ? 1 + r.int(3) : 0
  for (let c = 0; c < calls; c++) {
    const args = JSON.stringify({ path: randomText(r, 3), n: r.int(100) })
    const cuts = [0, ...Array.from({ length: r.int(4) }, () => r.int(args.length)), args.length].sort((a, b) => a - b)
    const withIndex = r.chance(0.9)
    cuts.slice(1).forEach((cut, i) => {
      const first = i === 0
      out.push(choice({ tool_calls: [{
        ...(withIndex ? { index: c } : {}),
        ...(first && r.chance(0.9) ? { id: `call_${c}_${r.int(1000)}`, type: 'function' } : {}),
        function: { ...(first ? { name: r.pick(['read_file', 'bash', 'edit']) } : {}), arguments: args.slice(cuts[i]!, cut) },
      }] }))
    })
  }
  const finish = r.pick(['stop', 'stop', calls > 0 ? 'tool_calls' : 'stop', 'length', 'content_filter', 'insufficient_system_resource', 'mystery'])
  out.push(choice({}, finish))
  if (r.chance(0.7)) out.push({ ...head, choices: [], usage: { prompt_tokens: r.int(5000), completion_tokens: r.int(500), prompt_tokens_details: { cached_tokens: r.int(100) } } })
  if (r.chance(0.05)) out.splice(r.int(out.length + 1), 0, { error: { message: randomText(r), type: r.pick(['server_error', 'rate_limit_exceeded', 'invalid_request_error']), code: r.pick([null, 429, 'context_length_exceeded']) } })
  return out
}

/** SSE framing of `payloads`, with the optional lines servers add (comments, event names, ids, CRLF). */
function frame(r: Rng, payloads: readonly (JsonValue | string)[], done: boolean): string {
  const eol = r.chance(0.15) ? '\r\n' : '\n'
  let text = ''
  for (const payload of payloads) {
    if (r.chance(0.05)) text += `: keep-alive${eol}${eol}`
    if (r.chance(0.05)) text += `event: message${eol}`
    if (r.chance(0.05)) text += `id: ${r.int(100)}${eol}`
    if (r.chance(0.02)) text += `retry: 1000${eol}`
    const data = typeof payload === 'string' ? payload : JSON.stringify(payload)
    text += `data:${r.chance(0.9) ? ' ' : ''}${data}${eol}${eol}`
  }
  if (done) text += `data: [DONE]${eol}${eol}`
  return text
}

/** Kinds of damage a stream can get, for the figures. */
type StreamDamage = 'none' | 'json' | 'invalid-json' | 'bytes' | 'random' | 'giant' | 'http' | 'end'

/** One generated stream: what is served and what damage it carries. */
export interface StreamCase {
  served: Served
  damage: StreamDamage[]
}

const encoder = new TextEncoder()

/** A stream for the fuzzers: mostly valid streams with damage, some pure noise, some HTTP oddities. */
export function streamCase(r: Rng, deepseek: boolean): StreamCase {
  const damage: StreamDamage[] = []
  let payloads: (JsonValue | string)[] = validPayloads(r, deepseek)
  if (r.chance(0.35)) {
    damage.push('json')
    for (let i = 0, n = 1 + r.int(3); i < n; i++) {
      const at = r.int(payloads.length)
      // No 100 KB strings here: big lines have their own cases, and each costs a socket's worth of time.
      payloads[at] = r.chance(0.2) ? randomJson(r, 3, false) : mutateJson(r, payloads[at] as JsonValue, false)
    }
  }
  if (r.chance(0.01)) {
    // Arguments (or content) nested far deeper than any real answer: JSON.parse takes it, recursion would not.
    damage.push('json')
    const deep = nestedText(1000 + r.int(100_000), '1', r.chance(0.7))
    payloads.splice(r.int(payloads.length), 0, r.pick([
      `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"d","function":{"name":"f","arguments":${deep}}}]}}]}`,
      `{"choices":[{"index":0,"delta":{"content":${deep}}}]}`,
      deep,
    ]))
  }
  if (r.chance(0.08)) {
    damage.push('invalid-json')
    const at = r.int(payloads.length)
    const text = JSON.stringify(payloads[at])
    payloads = [...payloads]
    payloads[at] = r.pick([text.slice(0, r.int(text.length)), `${text}}`, text.replace(':', ''), 'undefined', 'NaN', '{"a":1}{"b":2}', ''])
  }
  let bytes: Uint8Array = encoder.encode(frame(r, payloads, r.chance(0.8)))
  if (r.chance(0.04)) {
    damage.push('random')
    bytes = r.chance(0.5) ? randomBytes(r, r.int(2000)) : encoder.encode(frame(r, Array.from({ length: 1 + r.int(5) }, () => randomJson(r, 4, false)), r.chance(0.5)))
  }
  if (r.chance(0.4)) {
    damage.push('bytes')
    for (let i = 0, n = 1 + r.int(3); i < n; i++) bytes = mutateBytes(r, bytes, r.pick(BYTE_MUTATIONS)).bytes
  }
  const served: Served = { status: 200, contentType: 'text/event-stream', chunks: splitBytes(r, bytes), end: 'end' }
  if (r.chance(0.002)) {
    damage.push('giant')
    served.giantLine = 8 * 1024 * 1024 + 1 + r.int(1024)
  } else if (r.chance(0.005)) {
    // A large line that is still accepted: 1 MB of content in one event.
    damage.push('giant')
    served.chunks = [...served.chunks.slice(0, 1), encoder.encode(frame(r, [{ choices: [{ index: 0, delta: { content: 'y'.repeat(1_000_000) } }] }], false)), ...served.chunks.slice(1)]
  }
  if (r.chance(0.05)) {
    damage.push('http')
    const roll = r.int(5)
    if (roll === 0) served.contentType = r.pick(['application/json', 'text/plain', 'text/html; charset=utf-8'])
    else if (roll === 1) delete served.contentType
    else if (roll === 2) served.contentType = 'text/event-stream; charset=utf-8'
    else served.status = r.pick([400, 401, 402, 404, 408, 429, 500, 502, 503, 529])
  }
  if (r.chance(0.06)) {
    damage.push('end')
    served.end = r.chance(0.12) ? (r.chance(0.3) ? 'stall-headers' : 'stall') : 'destroy'
  }
  if (damage.length === 0) damage.push('none')
  return { served, damage }
}

