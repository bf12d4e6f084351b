/**
 * @rein/llm-openai: serves a provider route on `ctx.llm` with any OpenAI-compatible
 * chat-completions server (OpenAI, vLLM, Ollama, llama.cpp server, OpenRouter, …).
 */

import type { Context } from '@deepseek-ai/cordis'
import { OPENAI_MODELS } from './models.ts'
import { compatibleConfig, registerCompatible, type CompatibleConfig } from './plugin-config.ts'

/** The plugin's name, `llm-openai`; load it once per server, each under its own `provider` route. */
export const name = 'llm-openai'
/** The plugin needs `ctx.llm` (`@rein/llm`) to register its adapter on. */
export const inject = ['llm']

/** The plugin's Config: `CompatibleConfig`, with OpenAI's defaults. */
export type Config = CompatibleConfig
/** The plugin's Config schema, defaulting to OpenAI: route `openai`, `https://api.openai.com/v1`, key in `OPENAI_API_KEY`. */
export const Config = compatibleConfig({ provider: 'openai', label: 'OpenAI', baseURL: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' })

/** Starts the plugin: serves the Config's route on `ctx.llm` with an `OpenAiCompatibleAdapter` and the Config's catalog. */
export const apply = (ctx: Context, config: Config) => {
  registerCompatible(ctx, config, undefined, OPENAI_MODELS)
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
export { OPENAI_MODELS } from './models.ts'
export { readSseData, type SseOptions } from './sse.ts'
export { ResponseWatchdog } from './watchdog.ts'
export { checkChunk } from './wire-shape.ts'
export type { WireRequest, WireMessage, WireChunk, WireUsage } from './wire.ts'
