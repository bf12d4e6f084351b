/**
 * One provider attempt: chunks held back until the first delta (so a failed attempt shows nothing),
 * stopped when the caller cancels, the service stops or its provider is unloaded, and reported once,
 * when it ends, as an `LlmAttempt` with everything known about it.
 */

import type { AdapterRequest, GenerationOptions, LlmAdapter } from './adapter.ts'
import { chunkProblem } from './chunk-shape.ts'
import { cleanFailure, LlmError, toFailure, type LlmFailure, type LlmFailureCode } from './errors.ts'
import type { LlmAttempt, LlmEvent, ModelRoute } from './request.ts'
import { carriesAnswer, EMPTY_RESPONSE, isEmptyFinish, isDelta, showsAnswer, type FinishReason, type StreamChunk } from './stream.ts'
import { checkedUsage, type TokenUsage } from './usage.ts'
import { AbortableReads } from './abortable-reads.ts'
import { charTokens, inputTokens } from './estimate.ts'
import { kindOf, type Stop } from '@rein/base'

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

/**
 * How an attempt ends when rein stopped waiting or lost the connection, the server never having said
 * how its request ended (as a kill leaves it): once sent, the provider may bill it. A failure with a
 * status, or an error the server sent, is the server refusing it.
 */
const UNHEARD: ReadonlySet<LlmFailureCode> = new Set<LlmFailureCode>(['ABORTED', 'TIMEOUT', 'TRANSPORT', 'STREAM_CLOSED'])

/** The output settings an attempt is sent with. */
type Generation = Pick<GenerationOptions, 'maxTokens' | 'temperature' | 'reasoningEffort'>

/** The output settings a request carries, without the keys it leaves unset. */
export function generationOf(request: Generation): Generation {
  // Assigned: not a spread-first literal, slow on Node 20 (docs/architecture.md, Conventions).
  const options: Generation = {}
  if (request.maxTokens !== undefined) options.maxTokens = request.maxTokens
  if (request.temperature !== undefined) options.temperature = request.temperature
  if (request.reasoningEffort !== undefined) options.reasoningEffort = request.reasoningEffort
  return options
}

/** One read of an adapter: a batch from `streamBatches`, or one chunk of `stream`. */
type AdapterRead = StreamChunk | readonly StreamChunk[]

/**
 * What a failed attempt showed the caller: nothing; only reasoning, which the caller can be told to
 * discard (so the attempt may be retried); or part of the answer, which stands.
 */
type Shown = 'nothing' | 'reasoning' | 'answer'

/** How a failed attempt ended, for the retries and the fallback chain to decide on. */
export interface FailedAttempt {
  failure: LlmFailure
  shown: Shown
}

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

/** Where an attempt stands in its stream, and whom it tells. */
export interface AttemptContext {
  route: ModelRoute
  /** 0 for the first try on this route. */
  retry: number
  /** The route's position in the fallback chain. */
  position: number
  /** Stopped (with `CANCELLED` or `STOPPED`) when the whole stream must stop. */
  run: Stop
  inflight: InflightAttempts
  report: (event: Extract<LlmEvent, { type: 'attempt' | 'attempt-start' }>) => void
}

/**
 * The caller's side of one attempt: yields what it may see, a batch per read of the adapter
 * (`streamBatches`, else each chunk of `stream` alone), and returns how the attempt failed, or
 * undefined once its finish was taken.
 */
export async function* attemptReads(attempt: Attempt): AsyncGenerator<readonly StreamChunk[], FailedAttempt | undefined, undefined> {
  let reads: AbortableReads<AdapterRead> | undefined
  /** The adapter delivered its finish and the consumer took it: its request is over by itself. */
  let finished = false
  try {
    // Inside the try: an adapter that cannot even be iterated fails its attempt like any other.
    reads = new AbortableReads(attempt.source(), attempt.signal)
    while (true) {
      const next = await reads.next()
      if (next.done) return attempt.failed({ code: 'STREAM_CLOSED', message: 'the stream ended without a finish' })
      const out = attempt.take(next.value)
      if (out.length > 0) yield out
      const { finish } = attempt
      if (finish === undefined) continue
      // The caller may have cancelled while it took the chunks before: then no finish of the model's.
      attempt.signal.throwIfAborted()
      if (attempt.finishFailure) return attempt.failed(attempt.finishFailure)
      // Reported once the caller has every chunk before the finish, and before the finish itself.
      attempt.settle(undefined)
      yield [finish]
      finished = true
      return undefined
    }
  } catch (error) {
    return attempt.failed(attempt.failureOf(error))
  } finally {
    attempt.end(finished, reads?.close() ?? false)
  }
}

/** One attempt's state: what it holds back until the first delta, what it has shown, and its report. */
export class Attempt {
  private readonly controller = new AbortController()
  private readonly relay = () => this.controller.abort(this.context.run.reason)
  private readonly offRun: () => void
  private readonly entry: Inflight
  private readonly startedAt = Date.now()
  private readonly options: Generation
  private held: StreamChunk[] = []
  private shown = false
  /** Text or a tool call reached the caller (see `showsAnswer`): the attempt can no longer be taken back. */
  private answerShown = false
  private answered = false
  private outputChars = 0
  /** `outputChars` when the last usage came: output after it is what no report has counted yet. */
  private outputCharsAtUsage = 0
  /** Each call's name as its deltas last gave it (whole so far): a grown name counts only what it added. */
  private readonly names = new Map<number, number>()
  private usage: TokenUsage | undefined
  /** The request went out: the adapter said so (`sent`) or yielded a read, which only an answer brings. */
  private sent = false
  private readonly markSent = () => {
    this.sent = true
  }
  /** The server answered with an error (the adapter said so, `refused`, or sent a finish): it was heard. */
  private refused = false
  private readonly markRefused = () => {
    this.refused = true
  }
  private finishChunk: Extract<StreamChunk, { type: 'finish' }> | undefined
  private failedFinish: LlmFailure | undefined
  private reported = false

  /** Registers the attempt in flight, stopped with the run, and reports its start. */
  constructor(private readonly adapter: LlmAdapter, private readonly request: Omit<AdapterRequest, 'signal'>, private readonly context: AttemptContext) {
    const { run, route } = context
    if (run.stopped) this.relay()
    this.offRun = run.onStop(this.relay)
    this.entry = { provider: route.provider, controller: this.controller }
    context.inflight.add(adapter, this.entry)
    this.options = generationOf(request)
    context.report({ type: 'attempt-start', provider: route.provider, model: route.model, retry: context.retry, fallback: context.position, startedAt: this.startedAt, ...this.options })
  }

  /** Aborted when the attempt must stop: the run was, its provider unloaded, or it ended. */
  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** The finish a read brought, once one did. */
  get finish(): Extract<StreamChunk, { type: 'finish' }> | undefined {
    return this.finishChunk
  }

  /** The failure the finish ends the attempt with, if it does (see `failureOfFinish`). */
  get finishFailure(): LlmFailure | undefined {
    return this.failedFinish
  }

  /** The adapter's stream for this attempt. */
  source(): AsyncIterable<AdapterRead> {
    const adapterRequest = { ...this.request, signal: this.controller.signal, sent: this.markSent, refused: this.markRefused }
    const source: unknown = this.adapter.streamBatches ? this.adapter.streamBatches(adapterRequest) : this.adapter.stream(adapterRequest)
    // An array, a promise (an `async stream()`), nothing: the package's bug, which a TypeError would pass off as a network fault.
    if (!isAsyncIterable(source)) throw malformedStream(this.context.route.provider, source)
    return source
  }

  /**
   * What one read shows the caller now, together: nothing before the first delta (held back, so a
   * failed attempt shows nothing), then everything. A finish ends the read: it is kept for the loop,
   * releases what was held unless it fails the attempt, and chunks after it are dropped.
   */
  take(read: AdapterRead): StreamChunk[] {
    const out: StreamChunk[] = []
    this.sent = true
    // Shown once the read is returned: a read that throws partway (a malformed chunk) showed nothing.
    let shown = this.shown
    let answerShown = this.answerShown
    for (const given of isBatch(read) ? read : [read]) {
      const problem = chunkProblem(given)
      if (problem !== undefined) throw malformedChunk(this.context.route.provider, problem)
      // The runtime's alone: an adapter's would make the caller drop what it was shown.
      if (given.type === 'discard') continue
      this.outputChars += outputCharsOf(given, this.names)
      let chunk = given
      if (chunk.type === 'usage') {
        const usage = checkedUsage(chunk.usage)
        // What is no usage reaches nobody, and takes nothing back: without any, the attempt is estimated.
        if (usage === undefined) continue
        // The usage so far (see `StreamChunk`): kept as it comes, so an attempt cancelled later is charged it.
        this.usage = usage
        this.outputCharsAtUsage = this.outputChars
        chunk = { type: 'usage', usage }
      }
      if (chunk.type === 'finish') {
        this.finishChunk = chunk
        this.failedFinish = failureOfFinish(chunk, this.answered)
        if (!this.failedFinish && !shown) out.push(...this.held)
        break
      }
      this.answered ||= carriesAnswer(chunk)
      if (!shown && !isDelta(chunk)) {
        this.held.push(chunk)
        continue
      }
      if (!shown) {
        shown = true
        answerShown = this.held.some(showsAnswer)
        out.push(...this.held)
      }
      answerShown ||= showsAnswer(chunk)
      out.push(chunk)
    }
    if (shown && !this.shown) {
      this.shown = true
      this.held = []
    }
    this.answerShown = answerShown
    return out
  }

  /** Reports the attempt, once, with everything known about it; later calls do nothing. */
  settle(failure: LlmFailure | undefined): void {
    // A consumer that throws into the stream after the finish was reported must not report it again.
    if (this.reported) return
    this.reported = true
    const { route, retry, position } = this.context
    const { finishChunk: finish } = this
    const finishReason: FinishReason = finish?.reason ?? (failure?.code === 'ABORTED' ? 'aborted' : 'error')
    const { usage, estimated, reported } = this.chargedUsage(failure)
    const record: LlmAttempt = {
      provider: route.provider, model: route.model, retry, fallback: position,
      startedAt: this.startedAt, endedAt: Date.now(), shown: this.shown, ...(failure ? { failure } : {}), finishReason,
      ...(usage ? { usage } : {}), ...(estimated ? { usageEstimated: true as const } : {}), ...(reported ? { reportedUsage: reported } : {}),
      ...(finish?.responseId !== undefined ? { responseId: finish.responseId } : {}),
      ...(finish?.responseModel !== undefined ? { responseModel: finish.responseModel } : {}),
      ...this.options,
    }
    this.context.report({ type: 'attempt', ...record })
  }

  /**
   * What the attempt is charged: the provider's last report, plus an estimate of the output after
   * it (a relay may report the prompt at the start and the rest only at an end that never came, or
   * never); an estimate of all of it without a report, when it produced output or went out and ended
   * unheard (see `UNHEARD`). A provider that reports at the end, or with each delta, leaves no
   * output after its last report.
   */
  private chargedUsage(failure: LlmFailure | undefined): { usage?: TokenUsage; estimated?: true; reported?: TokenUsage } {
    const { usage } = this
    if (usage === undefined) return this.outputChars > 0 || this.endedUnheard(failure) ? { usage: estimateUsage(this.request, this.outputChars), estimated: true } : {}
    const uncounted = this.outputChars - this.outputCharsAtUsage
    if (uncounted <= 0) return { usage }
    return { usage: { ...usage, outputTokens: usage.outputTokens + Math.ceil(uncounted / 4) }, estimated: true, reported: usage }
  }

  /**
   * The request went out and `failure` ended it without the server saying how (no error status,
   * error event or body, no finish): the provider may have billed it.
   */
  private endedUnheard(failure: LlmFailure | undefined): boolean {
    if (!this.sent || this.refused || this.finishChunk !== undefined) return false
    return failure !== undefined && failure.status === undefined && UNHEARD.has(failure.code)
  }

  /** Reports the attempt as failed by `failure`; the result the route's retries decide on. */
  failed(failure: LlmFailure): FailedAttempt {
    this.settle(failure)
    return { failure, shown: this.answerShown ? 'answer' : this.shown ? 'reasoning' : 'nothing' }
  }

  /** The failure a thrown `error` stands for: the runtime's abort reason when it stopped the attempt. */
  failureOf(error: unknown): LlmFailure {
    const { signal } = this.controller
    return signal.aborted ? abortFailure(signal.reason, this.context.route) ?? toFailure(error) : toFailure(error)
  }

  /**
   * Lets the attempt go. `finished`: the consumer took the adapter's finish; `told`: the adapter's
   * iterator was told to close. Reports a consumer that stopped reading, if nothing was reported.
   */
  end(finished: boolean, told: boolean): void {
    // Stops the adapter's request when the consumer stops early or the attempt failed. A finished
    // one that was told to close is left alone: aborting it would run every listener down the chain
    // (the adapter's, its transport's) for a request that already ended.
    if (!finished || !told) this.controller.abort(FINISHED)
    this.offRun()
    this.context.inflight.remove(this.adapter, this.entry)
    if (!this.reported) this.settle({ ...CONSUMER_STOPPED })
  }
}

/** The failure of an attempt whose adapter yielded what is no chunk: its package's bug, not the network's, so not retried. */
function malformedChunk(provider: string, problem: string): LlmError {
  return new LlmError({ code: 'MALFORMED_RESPONSE', message: `the adapter for provider "${provider}" yielded ${problem}; its package has a bug (chunks must be StreamChunk, see @rein/llm)` })
}

/** The failure of an attempt whose adapter's `stream` returned no async iterable: its package's bug, so not retried. */
function malformedStream(provider: string, source: unknown): LlmError {
  const what = source instanceof Promise ? 'a promise' : kindOf(source)
  return new LlmError({ code: 'MALFORMED_RESPONSE', message: `the adapter for provider "${provider}" returned ${what} from stream; its package has a bug (stream must return an async iterable of StreamChunk, as an async generator does, see @rein/llm)` })
}

function isAsyncIterable(value: unknown): value is AsyncIterable<AdapterRead> {
  return typeof value === 'object' && value !== null && typeof (value as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function'
}

function isBatch(read: AdapterRead): read is readonly StreamChunk[] {
  return Array.isArray(read)
}

/**
 * The characters of output a chunk adds, for an estimate when the provider reports no usage. A
 * delta's `name` is the call's whole name so far (`names` holds each call's last length).
 */
function outputCharsOf(chunk: StreamChunk, names: Map<number, number>): number {
  if (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') return chunk.text.length
  if (chunk.type !== 'tool-call-delta') return 0
  if (chunk.name === undefined) return chunk.argumentsDelta.length
  const before = names.get(chunk.index) ?? 0
  names.set(chunk.index, chunk.name.length)
  return chunk.argumentsDelta.length + Math.max(0, chunk.name.length - before)
}

/** The failure a finish ends its attempt with: an error or an abort, or an answer with nothing in it. */
function failureOfFinish(chunk: Extract<StreamChunk, { type: 'finish' }>, answered: boolean): LlmFailure | undefined {
  if (chunk.reason === 'error' || chunk.reason === 'aborted') return chunk.failure ? cleanFailure(chunk.failure) : { code: 'TRANSPORT', message: 'the provider ended the stream with an error' }
  if (isEmptyFinish(chunk.reason, answered)) return { ...EMPTY_RESPONSE }
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
 * Usage for an attempt the provider never counted that it may bill (it produced output, or went out
 * and ended unheard; or the server sends no usage): about four characters per token, input from what
 * the model reads of the request (`inputTokens`), output from the deltas' characters.
 */
function estimateUsage(request: GenerationOptions, outputChars: number): TokenUsage {
  // As crash repair estimates a request a kill cut off (the agent's default tokenizer): the same request, the same charge.
  return { inputTokens: inputTokens(charTokens, request), outputTokens: Math.ceil(outputChars / 4) }
}
