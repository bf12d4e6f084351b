/**
 * `OpenAiCompatibleAdapter`: one `fetch` per attempt to `POST {baseURL}/chat/completions` with
 * `stream: true`, SSE framed by `eventsource-parser`, translated by `convert-stream.ts`.
 * No retries here: the runtime owns them.
 */

import { createRequire } from 'node:module'
import { LlmAdapter, LlmError, type AdapterRequest, type ModelInfo, type StreamChunk } from '@rein/llm'
import { toWireRequest, type RequestDefaults } from './convert-request.ts'
import { createChunkTranslator } from './convert-stream.ts'
import { readApiKey, redact } from './credentials.ts'
import { openAiDialect, type OpenAiDialect } from './dialect.ts'
import { failureFromResponse } from './errors.ts'
import { readSseData } from './sse.ts'

const { version } = createRequire(import.meta.url)('../package.json') as { version: string }
/** Sent on every request, so a provider can tell rein's traffic apart. */
export const USER_AGENT = `rein/${version}`

export interface OpenAiCompatibleOptions extends RequestDefaults {
  /** Names the server in messages: "OpenAI", "DeepSeek", "vLLM at 10.0.0.5". */
  label: string
  baseURL: string
  /** Environment variable holding the key; `false` for servers without one. */
  apiKeyEnv: string | false
  headers: Readonly<Record<string, string>>
  models: readonly ModelInfo[]
  streamIdleTimeoutMs: number
  dialect?: OpenAiDialect
}

const MAX_ERROR_BODY = 64 * 1024

export class OpenAiCompatibleAdapter extends LlmAdapter {
  constructor(readonly options: OpenAiCompatibleOptions) {
    super()
  }

  override resolveModel(_provider: string, model: string): ModelInfo | undefined {
    return this.options.models.find((info) => info.id === model)
  }

  override listModels(): readonly ModelInfo[] {
    return this.options.models
  }

  async *stream(request: AdapterRequest): AsyncGenerator<StreamChunk, void, undefined> {
    const { label, baseURL, apiKeyEnv, headers, streamIdleTimeoutMs, dialect = openAiDialect } = this.options
    const key = readApiKey(apiKeyEnv, label)
    const body = JSON.stringify(toWireRequest(request, this.options, dialect))
    const url = `${baseURL.replace(/\/+$/, '')}/chat/completions`
    // Until headers arrive the body watchdog cannot run, so the same limit covers the wait for them.
    const waiting = new AbortController()
    const timer = setTimeout(() => {
      waiting.abort(new LlmError({ code: 'TIMEOUT', message: `${label} sent no response for ${streamIdleTimeoutMs} ms` }))
    }, streamIdleTimeoutMs)
    let response: Response
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'user-agent': USER_AGENT,
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...headers,
        },
        body,
        signal: AbortSignal.any([request.signal, waiting.signal]),
      })
    } catch (error) {
      if (request.signal.aborted) throw error
      if (waiting.signal.aborted) throw waiting.signal.reason as LlmError
      const reason = (error as { cause?: { code?: string; message?: string } }).cause
      throw new LlmError({ code: 'TRANSPORT', message: `could not reach ${label} at ${url}: ${reason?.code ?? reason?.message ?? (error as Error).message}` }, { cause: error })
    } finally {
      clearTimeout(timer)
    }
    if (!response.ok) {
      const text = await readLimited(response)
      const failure = failureFromResponse(label, response.status, redact(text, key), response.headers)
      throw new LlmError(failure)
    }
    const type = response.headers.get('content-type') ?? ''
    if (!response.body || !type.includes('text/event-stream')) {
      const text = redact(await readLimited(response), key).slice(0, 200)
      throw new LlmError({ code: 'MALFORMED_RESPONSE', message: `${label} answered with ${type || 'no content type'} instead of an event stream: ${text}` })
    }

    const translator = createChunkTranslator(label)
    let sawDone = false
    for await (const data of readSseData(response.body, { provider: label, idleTimeoutMs: streamIdleTimeoutMs })) {
      if (data.trim() === '[DONE]') {
        sawDone = true
        break
      }
      let payload: unknown
      try {
        payload = JSON.parse(data)
      } catch {
        throw new LlmError({ code: 'MALFORMED_RESPONSE', message: `${label} sent a stream event that is not JSON: ${redact(data, key).slice(0, 120)}` })
      }
      yield* translator.push(payload)
    }
    yield* translator.end(sawDone)
  }
}

async function readLimited(response: Response): Promise<string> {
  try {
    const text = await response.text()
    return text.length > MAX_ERROR_BODY ? text.slice(0, MAX_ERROR_BODY) : text
  } catch {
    return ''
  }
}
