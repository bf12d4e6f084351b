/**
 * One provider attempt: chunks held back until the first delta (so a failed attempt shows nothing),
 * stopped when the caller cancels, the service stops or its provider is unloaded, and reported once,
 * when it ends, as an `LlmAttempt` with everything known about it.
 */

import type { AdapterRequest, GenerationOptions, LlmAdapter } from './adapter.ts'
import { toFailure, type LlmFailure } from './errors.ts'
import type { LlmAttempt, LlmEvent, ModelRoute } from './request.ts'
import { carriesAnswer, EMPTY_RESPONSE, isDelta, type FinishReason, type StreamChunk } from './stream.ts'
import type { TokenUsage } from './usage.ts'

/*
 * Abort reasons. Shared instances: aborting a controller without a reason makes a DOMException
 * (with a stack) per request, which the hot path should not pay for.
 */
/** The caller's signal fired. */
export const CANCELLED: LlmFailure = Object.freeze({ code: 'ABORTED', message: 'the request was cancelled' })
/** The `@rein/llm` service was disposed. */
export const STOPPED: LlmFailure = Object.freeze({ code: 'ABORTED', message: 'the llm service was stopped' })
/** The plugin that registered the adapter was disposed. */
const UNLOADED = Object.freeze({ abort: 'the provider was unloaded' })
/** The attempt is over; whatever the adapter still does is no longer wanted. */
const FINISHED = Object.freeze({ abort: 'the attempt is over' })
const CONSUMER_STOPPED: LlmFailure = Object.freeze({ code: 'ABORTED', message: 'the caller stopped reading the stream' })

export type AttemptResult = { ok: true } | { ok: false; failure: LlmFailure; shown: boolean }

interface Inflight {
  provider: string
  controller: AbortController
}

/** Attempts in flight, by adapter, so unloading a provider stops exactly its own. */
export class InflightAttempts {
  private readonly byAdapter = new Map<LlmAdapter, Set<Inflight>>()

  add(adapter: LlmAdapter, entry: Inflight): void {
    let entries = this.byAdapter.get(adapter)
    if (!entries) this.byAdapter.set(adapter, entries = new Set())
    entries.add(entry)
  }

  remove(adapter: LlmAdapter, entry: Inflight): void {
    const entries = this.byAdapter.get(adapter)
    if (!entries) return
    entries.delete(entry)
    if (entries.size === 0) this.byAdapter.delete(adapter)
  }

  /** Stops the attempts `adapter` runs for any of `routes`. */
  unload(adapter: LlmAdapter, routes: readonly string[]): void {
    for (const entry of this.byAdapter.get(adapter) ?? []) if (routes.includes(entry.provider)) entry.controller.abort(UNLOADED)
  }
}

export interface AttemptContext {
  route: ModelRoute
  /** 0 for the first try on this route. */
  retry: number
  /** The route's position in the fallback chain. */
  position: number
  /** Aborted (with `CANCELLED` or `STOPPED`) when the whole stream must stop. */
  run: AbortSignal
  inflight: InflightAttempts
  report: (event: Extract<LlmEvent, { type: 'attempt' | 'attempt-start' }>) => void
}

/**
 * Runs one attempt, yielding what the caller may see and returning how it ended. It yields a batch
 * per read of the adapter (`streamBatches`, else each chunk of `stream` alone): one await per read
 * down the whole chain, not one per chunk.
 */
export async function* runAttempt(adapter: LlmAdapter, request: Omit<AdapterRequest, 'signal'>, context: AttemptContext): AsyncGenerator<readonly StreamChunk[], AttemptResult, undefined> {
  const { run, route } = context
  const controller = new AbortController()
  const relay = () => controller.abort(run.reason)
  if (run.aborted) relay()
  else run.addEventListener('abort', relay, { once: true })
  const entry: Inflight = { provider: route.provider, controller }
  context.inflight.add(adapter, entry)

  const startedAt = Date.now()
  // Assigned: not a spread-first literal, slow on Node 20 (docs/architecture.md, Conventions).
  const options: Pick<AdapterRequest, 'maxTokens' | 'temperature' | 'reasoningEffort'> = {}
  if (request.maxTokens !== undefined) options.maxTokens = request.maxTokens
  if (request.temperature !== undefined) options.temperature = request.temperature
  if (request.reasoningEffort !== undefined) options.reasoningEffort = request.reasoningEffort
  context.report({ type: 'attempt-start', provider: route.provider, model: route.model, retry: context.retry, fallback: context.position, startedAt, ...options })
  let held: StreamChunk[] = []
  let shown = false
  let answered = false
  let outputChars = 0
  let usage: TokenUsage | undefined
  let finish: Extract<StreamChunk, { type: 'finish' }> | undefined
  let reported = false
  /** The adapter delivered its finish and the consumer took it: its request is over by itself. */
  let finished = false
  const settle = (failure: LlmFailure | undefined) => {
    reported = true
    const finishReason: FinishReason = finish?.reason ?? (failure?.code === 'ABORTED' ? 'aborted' : 'error')
    const estimated = usage === undefined && outputChars > 0 ? estimateUsage(request, outputChars) : undefined
    const record: LlmAttempt = {
      provider: route.provider, model: route.model, retry: context.retry, fallback: context.position,
      startedAt, endedAt: Date.now(), shown, ...(failure ? { failure } : {}), finishReason,
      ...(usage ? { usage } : estimated ? { usage: estimated, usageEstimated: true as const } : {}),
      ...(finish?.responseId !== undefined ? { responseId: finish.responseId } : {}),
      ...(finish?.responseModel !== undefined ? { responseModel: finish.responseModel } : {}),
      ...options,
    }
    context.report({ type: 'attempt', ...record })
  }
  const failed = (failure: LlmFailure): AttemptResult => {
    settle(failure)
    return { ok: false, failure, shown }
  }

  const adapterRequest = { ...request, signal: controller.signal }
  let reads: AbortableReads<StreamChunk | readonly StreamChunk[]> | undefined
  try {
    // Inside the try: an adapter that cannot even be iterated fails its attempt like any other.
    reads = new AbortableReads<StreamChunk | readonly StreamChunk[]>(adapter.streamBatches ? adapter.streamBatches(adapterRequest) : adapter.stream(adapterRequest), controller.signal)
    while (true) {
      const next = await reads.next()
      if (next.done) break
      const read = next.value
      /** What this read shows the caller, yielded together. */
      const out: StreamChunk[] = []
      for (const chunk of isBatch(read) ? read : [read]) {
        outputChars += outputCharsOf(chunk)
        if (chunk.type === 'usage') usage = chunk.usage
        if (chunk.type === 'finish') {
          finish = chunk
          const failure = finishFailure(chunk, answered)
          if (!failure) out.push(...held)
          if (out.length > 0) yield out
          // The caller may have cancelled while it took the chunks before: then no finish of the model's.
          controller.signal.throwIfAborted()
          if (failure) return failed(failure)
          // Reported once the caller has every chunk before the finish, and before the finish itself.
          settle(undefined)
          yield [chunk]
          finished = true
          return { ok: true }
        }
        answered ||= carriesAnswer(chunk)
        if (!shown && !isDelta(chunk)) {
          held.push(chunk)
          continue
        }
        if (!shown) {
          shown = true
          out.push(...held)
          held = []
        }
        out.push(chunk)
      }
      if (out.length > 0) yield out
    }
    return failed({ code: 'STREAM_CLOSED', message: 'the stream ended without a finish' })
  } catch (error) {
    return failed(controller.signal.aborted ? abortFailure(controller.signal.reason, route) ?? toFailure(error) : toFailure(error))
  } finally {
    const told = reads?.close() ?? false
    // Stops the adapter's request when the consumer stops early or the attempt failed. A finished
    // one that was told to close is left alone: aborting it would run every listener down the chain
    // (the adapter's, its transport's) for a request that already ended.
    if (!finished || !told) controller.abort(FINISHED)
    run.removeEventListener('abort', relay)
    context.inflight.remove(adapter, entry)
    if (!reported) settle({ ...CONSUMER_STOPPED })
  }
}

function isBatch(read: StreamChunk | readonly StreamChunk[]): read is readonly StreamChunk[] {
  return Array.isArray(read)
}

/** The characters of output a chunk carries, for an estimate when the provider reports no usage. */
function outputCharsOf(chunk: StreamChunk): number {
  if (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') return chunk.text.length
  if (chunk.type === 'tool-call-delta') return chunk.argumentsDelta.length + (chunk.name?.length ?? 0)
  return 0
}

/** The failure a finish ends its attempt with: an error or an abort, or a stop that answered nothing. */
function finishFailure(chunk: Extract<StreamChunk, { type: 'finish' }>, answered: boolean): LlmFailure | undefined {
  if (chunk.reason === 'error' || chunk.reason === 'aborted') return chunk.failure ?? { code: 'TRANSPORT', message: 'the provider ended the stream with an error' }
  if (chunk.reason === 'stop' && !answered) return { ...EMPTY_RESPONSE }
  return undefined
}

/** The failure an abort reason stands for; undefined for a reason that is not the runtime's. */
export function abortFailure(reason: unknown, route: ModelRoute): LlmFailure | undefined {
  if (reason === CANCELLED) return { ...CANCELLED }
  if (reason === STOPPED) return { ...STOPPED }
  if (reason === UNLOADED) return { code: 'TRANSPORT', message: `the provider serving route "${route.provider}" was unloaded mid-request` }
  return undefined
}

/**
 * Usage for an attempt that produced output the provider never counted (it failed, was aborted, or
 * the server sends no usage): about four characters per token, input from the system text and the
 * JSON of the messages and tools, output from the deltas' characters.
 */
function estimateUsage(request: GenerationOptions, outputChars: number): TokenUsage {
  const inputChars = (request.system?.length ?? 0) + JSON.stringify(request.messages).length + (request.tools ? JSON.stringify(request.tools).length : 0)
  return { inputTokens: Math.ceil(inputChars / 4), outputTokens: Math.ceil(outputChars / 4) }
}

/**
 * Reads `source` but stops waiting the moment `signal` aborts (rejecting with its reason), so an
 * adapter that ignores its signal cannot hold a cancelled call open. One promise per read, settled
 * by the read or by the abort (a race per read would also leave a reaction on the abort's promise
 * for every read of the stream). Not a generator: a read costs no hop of its own.
 */
class AbortableReads<T> {
  private readonly iterator: AsyncIterator<T>
  private stop: ((reason: unknown) => void) | undefined
  private readonly onAbort = () => this.stop?.(this.signal.reason)

  constructor(source: AsyncIterable<T>, private readonly signal: AbortSignal) {
    this.iterator = source[Symbol.asyncIterator]()
    signal.addEventListener('abort', this.onAbort, { once: true })
  }

  /** The source's next read; rejects with the abort's reason once `signal` aborts. */
  async next(): Promise<IteratorResult<T>> {
    if (this.signal.aborted) throw this.signal.reason as Error
    try {
      return await new Promise<IteratorResult<T>>((resolve, reject) => {
        this.stop = reject
        this.iterator.next().then(resolve, reject)
      })
    } finally {
      this.stop = undefined
    }
  }

  /** Stops listening and tells the source we are done, without waiting; false when it cannot be told. */
  close(): boolean {
    this.stop = undefined
    this.signal.removeEventListener('abort', this.onAbort)
    if (!this.iterator.return) return false
    try {
      void Promise.resolve(this.iterator.return()).catch(() => {})
    } catch {
      // A `return` that throws at once is ignored like one that rejects: the attempt still ends.
    }
    return true
  }
}
