/**
 * Runs one fuzzed stream through a real adapter (llm-openai's or llm-deepseek's, each built by its
 * own plugin's `apply`) or through the whole `LlmRuntime`, over a real socket, and says how it
 * ended: a finish, a typed failure, a stray (non-ReinError) throw, or a hang.
 */

import { Context } from '@deepseek-ai/cordis'
import { isReinError } from '@rein/base'
import LlmRuntime, { BlockAssembler, userMessage, type LlmAdapter, type StreamChunk } from '@rein/llm'
import * as deepseek from '@rein/llm-deepseek'
import * as openai from '@rein/llm-openai'

/** The idle limit the fuzzed adapters get: short, so a silent stream ends quickly (with TIMEOUT). */
const IDLE_MS = 1_000
/** A stream still open this long after its request is a hang: no idle limit would allow it. */
const HANG_MS = 30_000

export type Route = 'openai' | 'deepseek'

export type StreamOutcome =
  | { kind: 'finish'; reason: string }
  | { kind: 'failure'; code: string }
  | { kind: 'stray'; error: string }
  | { kind: 'hang' }
  /** A finish that was not the last chunk, or a stream that ended with no finish and no throw. */
  | { kind: 'unfinished'; detail: string }

/** The adapter each plugin registers for `baseURL`, taken from its own `apply`. */
export function pluginAdapters(baseURL: string): Record<Route, LlmAdapter> {
  const adapters: Partial<Record<Route, LlmAdapter>> = {}
  for (const [route, plugin] of [['openai', openai], ['deepseek', deepseek]] as const) {
    const config = plugin.Config({ baseURL, apiKeyEnv: false, streamIdleTimeoutMs: IDLE_MS })
    const ctx = { llm: { registerAdapter: (_route: string, adapter: LlmAdapter) => { adapters[route] = adapter } } }
    plugin.apply(ctx as unknown as Context, config)
  }
  return adapters as Record<Route, LlmAdapter>
}

/** A root context with `LlmRuntime` (no retries) and both provider plugins on `baseURL`. */
export async function runtimeContext(baseURL: string): Promise<Context> {
  const root = new Context()
  await root.plugin(LlmRuntime, { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
  await root.plugin(openai, { baseURL, apiKeyEnv: false, streamIdleTimeoutMs: IDLE_MS })
  await root.plugin(deepseek, { baseURL, apiKeyEnv: false, streamIdleTimeoutMs: IDLE_MS })
  return root
}

const MODEL: Record<Route, string> = { openai: 'gpt-test', deepseek: 'deepseek-v4-flash' }

/** Case `n` through `adapter.stream` directly: every throw is seen as thrown. */
export async function throughAdapter(adapter: LlmAdapter, route: Route, n: number): Promise<StreamOutcome> {
  const signal = new AbortController().signal
  return bounded(consume(adapter.stream({ provider: route, model: MODEL[route], messages: [userMessage(`fuzz-case-${n}`, 'u1')], signal })))
}

/**
 * Case `n` through the runtime, which never throws: it must end with one `finish`. A failure it
 * reports as `TRANSPORT` from a server that answered hides an untyped throw (the runtime maps any
 * non-LlmError to TRANSPORT), so it counts as a stray.
 */
export async function throughRuntime(root: Context, route: Route, n: number): Promise<StreamOutcome> {
  const outcome = await bounded(consume(root.llm.stream({ provider: route, model: MODEL[route], messages: [userMessage(`fuzz-case-${n}`, 'u1')] })))
  if (outcome.kind === 'finish' && outcome.reason === 'error:TRANSPORT') return { kind: 'stray', error: 'the runtime reported TRANSPORT for a server that answered' }
  return outcome
}

async function consume(stream: AsyncIterable<StreamChunk>): Promise<StreamOutcome> {
  const assembler = new BlockAssembler()
  let finish: Extract<StreamChunk, { type: 'finish' }> | undefined
  try {
    for await (const chunk of stream) {
      if (finish) return { kind: 'unfinished', detail: `a ${chunk.type} chunk after the finish` }
      assembler.push(chunk)
      if (chunk.type === 'finish') finish = chunk
    }
    // What a consumer does with the answer: it must assemble without throwing.
    assembler.blocks()
  } catch (error) {
    if (isReinError(error) && typeof error.code === 'string' && error.code !== '') return { kind: 'failure', code: error.code }
    return { kind: 'stray', error: error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error) }
  }
  if (!finish) return { kind: 'unfinished', detail: 'the stream ended with neither a finish nor a thrown failure' }
  return { kind: 'finish', reason: finish.reason === 'error' ? `error:${finish.failure?.code ?? '?'}` : finish.reason }
}

async function bounded(run: Promise<StreamOutcome>): Promise<StreamOutcome> {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<StreamOutcome>((resolve) => { timer = setTimeout(resolve, HANG_MS, { kind: 'hang' }) })
  try {
    return await Promise.race([run, hang])
  } finally {
    clearTimeout(timer)
  }
}
