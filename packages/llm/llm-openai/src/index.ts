/**
 * @rein/llm-openai: serves a provider route on `ctx.llm` with any OpenAI-compatible
 * chat-completions server (OpenAI, vLLM, Ollama, llama.cpp server, OpenRouter, …).
 */

import type { Context } from '@deepseek-ai/cordis'
import { compatibleConfig, registerCompatible, type CompatibleConfig } from './plugin-config.ts'

export const name = 'llm-openai'
export const inject = ['llm']

export type Config = CompatibleConfig
export const Config = compatibleConfig({ provider: 'openai', label: 'OpenAI', baseURL: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' })

export const apply = (ctx: Context, config: Config) => {
  registerCompatible(ctx, config)
}

export { compatibleConfig, registerCompatible, type CompatibleConfig, type CompatibleDefaults } from './plugin-config.ts'
export { OpenAiCompatibleAdapter, USER_AGENT, type OpenAiCompatibleOptions } from './adapter.ts'
export { openAiDialect, type OpenAiDialect } from './dialect.ts'
export { ModelConfig, toModelInfo } from './models-config.ts'
export { toWireRequest, toWireBody, toWireMessages } from './convert-request.ts'
export { createChunkTranslator, mapFinishReason, mapUsage, type ChunkTranslator, type TranslatorOptions } from './convert-stream.ts'
export { failureFromResponse, failureFromStreamError, failureFromTransportError, parseRetryAfter } from './errors.ts'
export type { HeaderLookup } from './transport.ts'
export { checkBaseURL } from './base-url.ts'
export { readSseData, type SseOptions } from './sse.ts'
export { ResponseWatchdog } from './watchdog.ts'
export { checkChunk } from './wire-shape.ts'
export type { WireRequest, WireMessage, WireChunk, WireUsage } from './wire.ts'
