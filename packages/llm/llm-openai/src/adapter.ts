/**
 * `OpenAiCompatibleAdapter`: one HTTP request per attempt to `POST {baseURL}/chat/completions` with
 * `stream: true`; each read of the body framed (`SseFramer` over `eventsource-parser`) and translated
 * (`convert-stream.ts`) by `event-reading.ts`, in one generator. Every wait
 * on the server — headers, stream reads, error bodies — runs under one idle watchdog and the
 * caller's signal. No retries here: the runtime owns them.
 */

import { createRequire } from 'node:module'
import { isSecretName, shorten, shownUrl, urlSecrets } from '@rein/base'
import { LlmAdapter, LlmError, type AdapterRequest, type LlmFailure, type ModelInfo, type ProviderEndpoint, type StreamChunk } from '@rein/llm'
import { checkBaseURL, userInfo } from './base-url.ts'
import { checkHeaders } from './headers.ts'
import { toWireBody, type RequestDefaults } from './convert-request.ts'
import { checkApiKeyEnv, readApiKey, redact, sentSecrets } from './credentials.ts'
import { openAiDialect, type OpenAiDialect } from './dialect.ts'
import { failureFromResponse, failureFromTransportError, failureFromUnframedBody, isChatCompletion, isErrorBody, isServerError, notStreamedMessage, serverError } from './errors.ts'
import { readBounded, STOP_READING } from './response-body.ts'
import { EventReading } from './event-reading.ts'
import { readBody } from './sse.ts'
import { post, type ChunkRead, type ChunkReader, type WireResponse } from './transport.ts'
import { ResponseWatchdog } from './watchdog.ts'

const { version } = createRequire(import.meta.url)('../package.json') as { version: string }
/** Sent on every request, so a provider can tell rein's traffic apart. */
export const USER_AGENT = `rein/${version}`

/** How one OpenAI-compatible server is reached and what it serves. */
export interface OpenAiCompatibleOptions extends RequestDefaults {
  /** Names the server in messages: "OpenAI", "DeepSeek", "vLLM at 10.0.0.5". */
  label: string
  /** An http:// or https:// URL; anything else throws `CONFIG_INVALID` from the constructor. */
  baseURL: string
  /** Name of the environment variable holding the key; `false` for servers without one. Anything but a name throws `CONFIG_INVALID` from the constructor. */
  apiKeyEnv: string | false
  headers: Readonly<Record<string, string>>
  models: readonly ModelInfo[]
  streamIdleTimeoutMs: number
  dialect?: OpenAiDialect
  /** `gen_ai.provider.name`; default from the host (`openai`, `deepseek`), else `openai_compatible`. */
  providerName?: string
}

/** The GenAI conventions' names of the servers whose hosts say what they are. */
const KNOWN_HOSTS: Readonly<Record<string, string>> = { 'api.openai.com': 'openai', 'api.deepseek.com': 'deepseek' }

/**
 * A URL as it may be shown — no user, password, query nor a key in the path (`/key/<k>`, `/sk-…`),
 * where gateways take one — or undefined when there is nothing to hide (then it is shown as given).
 */
function withoutCredentials(url: URL): string | undefined {
  const shown = shownUrl(url)
  return shown === url.href ? undefined : shown
}

/** An error body is read up to this many bytes; the rest is never read. */
const MAX_ERROR_BODY = 64 * 1024

/**
 * A read that failed after the model finished (the connection reset, or silent, before `[DONE]`):
 * the answer is whole, so the body counts as ended; else the failure stands.
 */
function endedIfFinished(error: unknown, reading: EventReading, signal: AbortSignal): { done: true; cut: true } {
  if (signal.aborted || !reading.finished) throw error
  return { done: true, cut: true }
}

/** The `LlmAdapter` for any OpenAI chat-completions server: one HTTP request per attempt. */
export class OpenAiCompatibleAdapter extends LlmAdapter {
  /** Where requests go: `{baseURL}/chat/completions`, the base URL's query kept (it may hold a key). */
  private readonly target: URL
  /** `target` as messages show it: without its query. */
  private readonly url: string
  /** The base URL's `user:password@` as a Basic `authorization` header, sent when no key is. */
  private readonly basicAuth: string | undefined
  private headers: { key: string | undefined; value: Readonly<Record<string, string>> } | undefined
  /**
   * Credentials sent besides the key (see `sentSecrets`), and what the base URL's masking hides (a
   * key in its path, every query value), which a server quotes back in a 404's `Cannot POST <url>`:
   * cut out of whatever a server echoes.
   */
  private readonly secrets: readonly string[]
  private madeEndpoint: ProviderEndpoint | undefined

  constructor(readonly options: OpenAiCompatibleOptions) {
    super()
    checkBaseURL(options.baseURL)
    checkApiKeyEnv(options.apiKeyEnv)
    checkHeaders(options.headers)
    const target = new URL(options.baseURL)
    target.pathname = `${target.pathname.replace(/\/+$/, '')}/chat/completions`
    const user = userInfo(target)
    this.basicAuth = user ? `Basic ${Buffer.from(`${user.user}:${user.password}`).toString('base64')}` : undefined
    this.secrets = [...new Set([...sentSecrets(user?.password, this.basicAuth, options.headers), ...urlSecrets(target)])]
    target.username = ''
    target.password = ''
    this.target = target
    this.url = withoutCredentials(target) ?? target.href
  }

  override resolveModel(_provider: string, model: string): ModelInfo | undefined {
    return this.options.models.find((info) => info.id === model)
  }

  override listModels(): readonly ModelInfo[] {
    return this.options.models
  }

  /** Made once: telemetry asks for it on every attempt, and the options never change. */
  override endpoint(): ProviderEndpoint {
    if (this.madeEndpoint) return this.madeEndpoint
    const { label, baseURL, providerName } = this.options
    const url = new URL(baseURL)
    return this.madeEndpoint = Object.freeze({ label, baseURL: withoutCredentials(url) ?? baseURL, providerName: providerName ?? KNOWN_HOSTS[url.hostname] ?? 'openai_compatible' })
  }

  async *stream(request: AdapterRequest): AsyncGenerator<StreamChunk, void, undefined> {
    for await (const batch of this.streamBatches(request)) {
      for (const chunk of batch) yield chunk
    }
  }

  /**
   * The chunks of each read of the response together: the runtime awaits once per read. The body is
   * read, framed and translated in this one generator, not a chain of them: each read costs one hop.
   */
  override async *streamBatches(request: AdapterRequest): AsyncGenerator<readonly StreamChunk[], void, undefined> {
    const { label, apiKeyEnv, streamIdleTimeoutMs, dialect = openAiDialect } = this.options
    const key = readApiKey(apiKeyEnv, label)
    const body = toWireBody(request, this.options, dialect)
    const watchdog = new ResponseWatchdog(label, streamIdleTimeoutMs, request.signal)
    /** Set once the body is being read: what is left of it is dropped when the stream ends early. */
    let reader: ChunkReader | undefined
    try {
      const response = await this.send(body, key, watchdog, request)
      if (response.status < 200 || response.status > 299) {
        request.refused?.()
        throw new LlmError(await this.failureOf(response, watchdog, key, request))
      }
      const notStream = this.notAStream(response)
      if (notStream) {
        // An answer that is no stream (an error object, a whole completion) is the server's word, not silence.
        request.refused?.()
        const requestId = response.headers.get('x-request-id')
        let failure: LlmFailure = { code: 'MALFORMED_RESPONSE', message: notStream }
        if (isPlainJson(response.headers)) failure = await this.jsonNotStream(response, watchdog, key, request.signal, notStream)
        // No reason to wait for (or hold) a body that may never end.
        else response.body.cancel().catch(() => {})
        throw new LlmError({ ...failure, status: response.status, ...(requestId ? { requestId } : {}) })
      }
      reader = response.body
      watchdog.phase = 'body'
      const reading = new EventReading(label, this.secretsWith(key), dialect)
      try {
        while (true) {
          // try/catch, not .catch(): no closure, promise or hop added to every read.
          let read: ChunkRead | { done: true; cut: true }
          try {
            read = await readBody(reader, watchdog, label)
          } catch (error) {
            read = endedIfFinished(error, reading, request.signal)
          }
          if (read.done) {
            const last = 'cut' in read ? reading.finish() : reading.end()
            if (last.length > 0) yield last
            return
          }
          const out = reading.push(read.value)
          if (reading.over) {
            // The answer ends here; the rest of the body is read in the background, not waited for.
            reader.release?.()
            const last = reading.finish()
            if (last.length > 0) yield last
            return
          }
          if (out.length > 0) yield out
        }
      } catch (error) {
        // The response is over: its connection goes now, not after the consumer took what was salvaged.
        reader.cancel(STOP_READING).catch(() => {})
        if (isServerError(error)) request.refused?.()
        const out = reading.salvage()
        if (out.length > 0) yield out
        throw withoutSecrets(error, this.secretsWith(key))
      }
    } catch (error) {
      // Every failure, not only the stream's: an error body, a content type, a redirect's location
      // and a request id are the server's text too, and a hostile one echoes the key in any of them.
      throw withoutSecrets(error, this.secretsWith(key))
    } finally {
      watchdog.dispose()
      reader?.cancel(STOP_READING).catch(() => {})
    }
  }

  private async send(body: string, key: string | undefined, watchdog: ResponseWatchdog, request: AdapterRequest): Promise<WireResponse> {
    try {
      return await watchdog.wait(post(this.target, this.headersFor(key), body, watchdog.stop, request.sent))
    } catch (error) {
      if (request.signal.aborted || watchdog.timedOut) throw watchdog.stop.reason ?? error
      throw new LlmError(failureFromTransportError(this.options.label, this.url, error), { cause: error })
    }
  }

  /** Every credential a request with `key` sends. */
  private secretsWith(key: string | undefined): readonly string[] {
    return key ? [key, ...this.secrets] : this.secrets
  }

  /** The request headers for `key`: made once per key, not per request (the key is read per request, so a new one is used at once). */
  private headersFor(key: string | undefined): Readonly<Record<string, string>> {
    const made = this.headers
    if (made !== undefined && made.key === key) return made.value
    const value = {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      // Uncompressed: a compressed event stream would hold events back until a block fills.
      'accept-encoding': 'identity',
      'user-agent': USER_AGENT,
      ...(key ? { authorization: `Bearer ${key}` } : this.basicAuth ? { authorization: this.basicAuth } : {}),
      ...this.options.headers,
    }
    this.headers = { key, value }
    return value
  }

  /** Why a 2xx answer cannot be read as an event stream, or undefined when it can. */
  private notAStream(response: WireResponse): string | undefined {
    const { label } = this.options
    const type = response.headers.get('content-type') ?? ''
    // Media types ignore case (RFC 9110): Text/Event-Stream is one too.
    if (!type.toLowerCase().includes('text/event-stream')) {
      return `${label} answered HTTP ${response.status} with ${type || 'no content type'} instead of an event stream; is ${this.endpoint().baseURL} its API's base URL? (requests go to ${this.url})`
    }
    const encoding = response.headers.get('content-encoding')?.trim().toLowerCase()
    if (encoding && encoding !== 'identity') return `${label} sent its event stream with content-encoding ${encoding}, which is not decoded here; requests ask for none (accept-encoding: identity) unless the headers option sets another`
    return undefined
  }

  /**
   * Why a 2xx JSON answer is no stream, from at most 64 KiB of it: an error object a gateway sent
   * with 200 is that error, classified as one inside a stream would be; a whole chat completion
   * means the server ignored `stream: true`, which the base-URL hint (`hint`) would hide; other JSON
   * gets the hint and how it began.
   */
  private async jsonNotStream(response: WireResponse, watchdog: ResponseWatchdog, key: string | undefined, caller: AbortSignal, hint: string): Promise<LlmFailure> {
    watchdog.phase = 'body'
    const read = await readBounded(response.body, watchdog, MAX_ERROR_BODY, caller)
    const text = redact(read.text, this.secretsWith(key)).trim()
    const { label } = this.options
    if (isErrorBody(text)) return failureFromUnframedBody(label, text)
    if (isChatCompletion(text)) return { code: 'MALFORMED_RESPONSE', message: notStreamedMessage(label, `HTTP ${response.status}, ${response.headers.get('content-type') ?? ''}`) }
    return { code: 'MALFORMED_RESPONSE', message: text === '' ? hint : `${hint}; it began ${JSON.stringify(shorten(text, 120))}` }
  }

  /** A non-2xx answer as a failure: classified by its status, from at most 64 KiB of its body. */
  private async failureOf(response: WireResponse, watchdog: ResponseWatchdog, key: string | undefined, request: AdapterRequest) {
    const { label } = this.options
    watchdog.phase = 'body'
    const read = await readBounded(response.body, watchdog, MAX_ERROR_BODY, request.signal)
    const failure = failureFromResponse(label, response.status, redact(read.text, this.secretsWith(key)), response.headers, request.model)
    if (read.cut === 'stalled') failure.message += ` (the error body stalled after ${read.bytes} bytes: nothing for ${watchdog.idleMs} ms)`
    else if (read.cut === 'broken') failure.message += ` (the connection broke after ${read.bytes} bytes of the error body)`
    if (response.status === 404 && !failure.modelNotFound) failure.message += ` (nothing at ${this.url}? check baseURL)`
    if (response.status === 401) failure.message += this.keyHint()
    if (response.status >= 300 && response.status < 400) failure.message += this.redirectHint(response.headers.get('location'))
    return failure
  }

  /** Where the credentials the server refused came from: the user fixes them there. */
  private keyHint(): string {
    const { apiKeyEnv, headers } = this.options
    const others = [...(this.basicAuth ? ['the user and password in baseURL'] : []), ...Object.keys(headers).filter(isSecretName).map((name) => `the ${name} header`)]
    if (apiKeyEnv !== false) return ` (check the key in ${apiKeyEnv}${others.length > 0 ? ` and ${others.join(', ')}` : ''})`
    return others.length > 0 ? ` (check ${others.join(', ')})` : ' (no key was sent: apiKeyEnv is false; name the variable that holds one)'
  }

  /** Redirects are not followed (a POST's body would be dropped or resent unasked): say where it pointed. */
  private redirectHint(location: string | null): string {
    if (location === null) return ' (a redirect without a location; redirects are not followed)'
    let shown: string
    try {
      const to = new URL(location, this.target)
      shown = withoutCredentials(to) ?? to.href
    } catch {
      return ' (a redirect to an unreadable location; redirects are not followed)'
    }
    return ` (redirected to ${shown}; set baseURL to the address it names, redirects are not followed)`
  }
}

/**
 * Whether the answer is JSON, sent as it is: a server that ignored `stream` sends its completion so.
 * An encoded body is not decoded here, so it is not read.
 */
function isPlainJson(headers: WireResponse['headers']): boolean {
  const encoding = headers.get('content-encoding')?.trim().toLowerCase()
  return /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i.test(headers.get('content-type') ?? '') && (!encoding || encoding === 'identity')
}

/**
 * A failure whose message quotes the server (an in-stream error's text, a badly shaped value) with
 * the credentials removed. The original is dropped, not kept as the cause: its message still holds them.
 */
function withoutSecrets(error: unknown, secrets: readonly string[]): unknown {
  if (!(error instanceof LlmError)) return error
  const { message, requestId } = error.failure
  const clean = redact(message, secrets)
  const cleanId = requestId === undefined ? undefined : redact(requestId, secrets)
  if (clean === message && cleanId === requestId) return error
  const failure: LlmFailure = { ...error.failure, message: clean }
  if (cleanId !== undefined) failure.requestId = cleanId
  return isServerError(error) ? serverError(failure) : new LlmError(failure)
}
