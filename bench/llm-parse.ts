/**
 * Parse cost per stream chunk: the OpenAI adapter's path (SSE framing with its idle watchdog,
 * JSON.parse, the chunk shape check, translation to StreamChunks; through `readSseData`, one generator
 * more than the adapter's own loop) against bare eventsource-parser +
 * JSON.parse on the same bytes. Run: pnpm bench:micro (from the repository root). With
 * BENCH_JSON=1 it prints one line `BENCH_JSON {…}` (nanoseconds per event) instead (bench/loop/run.mjs reads it).
 */

import { createChunkTranslator, readSseData } from '@rein/llm-openai'
import { createParser } from 'eventsource-parser'
import { measure, report } from './measure.ts'

const EVENTS = 2_000
const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-bench', system_fingerprint: 'fp', usage: null }
const events: string[] = []
for (let i = 0; i < EVENTS; i++) {
  const delta = i % 10 === 9
    ? { tool_calls: [{ index: 0, ...(i === 9 ? { id: 'call_1', type: 'function', function: { name: 'write', arguments: '' } } : { function: { arguments: '{"k":1}' } }) }] }
    : { content: `token ${i} ` }
  events.push(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] })}\n\n`)
}
events.push(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\n`, 'data: [DONE]\n\n')
const bytes = new TextEncoder().encode(events.join(''))
// Network-sized pieces: what a socket hands over, splitting events anywhere.
const PIECE = 1_400
const pieces: Uint8Array[] = []
for (let offset = 0; offset < bytes.length; offset += PIECE) pieces.push(bytes.subarray(offset, offset + PIECE))

function body(): ReadableStream<Uint8Array> {
  let i = 0
  return new ReadableStream({ pull(controller) { if (i < pieces.length) controller.enqueue(pieces[i++]!); else controller.close() } })
}

async function bare(): Promise<number> {
  let parsed = 0
  const parser = createParser({ onEvent: (event) => { if (event.data !== '[DONE]') { JSON.parse(event.data); parsed++ } } })
  const decoder = new TextDecoder()
  const reader = body().getReader()
  for (let next = await reader.read(); !next.done; next = await reader.read()) parser.feed(decoder.decode(next.value, { stream: true }))
  return parsed
}

async function adapter(): Promise<number> {
  let chunks = 0
  const translator = createChunkTranslator('bench')
  for await (const data of readSseData(body(), { provider: 'bench', idleTimeoutMs: 60_000 })) {
    if (data === '[DONE]') break
    chunks += translator.push(JSON.parse(data)).length
  }
  return chunks + translator.end(true).length
}

const perEvent = { iterations: 1, rounds: 15, units: EVENTS + 1, warmup: 3 }
const baseline = await measure('eventsource-parser + JSON.parse', bare, perEvent)
const ours = await measure('llm-openai: readSseData + parse + translate', adapter, perEvent)
if (process.env.BENCH_JSON === '1') console.log(`BENCH_JSON ${JSON.stringify({ events: EVENTS + 1, bareNs: baseline.nsPerOp, adapterNs: ours.nsPerOp })}`)
else report(`llm-parse: per stream event (${EVENTS + 1} events, ${(bytes.length / 1024).toFixed(0)} KiB, ${PIECE}-byte reads, median of 15)`, baseline, [ours])
