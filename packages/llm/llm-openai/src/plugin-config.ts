/**
 * The Config every OpenAI-compatible provider plugin shares, with per-provider defaults, and the
 * `apply` that registers the adapter. `@rein/llm-deepseek` is this plus its own defaults and dialect.
 */

import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { maskKeyShapes, MAX_TIMER_MS } from '@rein/base'
import type { ModelInfo } from '@rein/llm'
import { OpenAiCompatibleAdapter } from './adapter.ts'
import { checkBaseURL } from './base-url.ts'
import { checkApiKeyEnv } from './credentials.ts'
import { checkHeaders } from './headers.ts'
import type { OpenAiDialect } from './dialect.ts'
import { checkDefaultEffort, ModelConfig, overBuiltIn } from './models-config.ts'

/** The Config every OpenAI-compatible provider plugin takes. */
export interface CompatibleConfig {
  provider: string
  label: string
  baseURL: string
  apiKeyEnv: string | false
  headers: Record<string, string>
  models: ModelConfig[]
  streamIdleTimeoutMs: number
  maxTokensField: 'max_tokens' | 'max_completion_tokens'
  /** `gen_ai.provider.name` for telemetry; default from the base URL's host. */
  providerName?: string
}

/** A provider's defaults for its Config. */
export interface CompatibleDefaults {
  provider: string
  label: string
  baseURL: string
  apiKeyEnv: string
}

/**
 * The Config schema with `defaults`; the base URL is checked as it loads. Without a `label`, the
 * server is named `defaults.label` at the default base URL's host, else by its own host: a local
 * server's errors must not say they came from OpenAI.
 */
export function compatibleConfig(defaults: CompatibleDefaults): Schema<Partial<CompatibleConfig>, CompatibleConfig> {
  const fields = Schema.object({
    provider: Schema.string().default(defaults.provider).description('Route name requests use (`provider: <route>`).'),
    label: Schema.string().description(`Names the server in messages. Default: ${defaults.label} at ${hostOf(defaults.baseURL)}, else the base URL's host (host:port).`),
    // Checked as the config loads: a URL without a scheme fails the plugin at startup with the fix.
    baseURL: Schema.transform(Schema.string(), (value) => checkBaseURL(value)).default(defaults.baseURL).description('Base URL with http:// or https://; requests go to {baseURL}/chat/completions.'),
    // Checked as the config loads, by rein rather than by a union, whose error quotes the value: a value that is not a variable's name is most likely the key itself.
    apiKeyEnv: Schema.transform(Schema.any(), (value) => checkApiKeyEnv(value, defaults.apiKeyEnv)).default(defaults.apiKeyEnv).description('Name of the environment variable with the API key; false for a server without keys.'),
    // Checked as the config loads: a value HTTP cannot carry fails the plugin at startup, not every request as a network error.
    headers: Schema.transform(Schema.dict(Schema.string()), (value) => checkHeaders(value)).default({}).description('Extra HTTP headers on every request.'),
    models: Schema.array(ModelConfig).default([]).description('Model catalog entries; an entry with a built-in id replaces it.'),
    streamIdleTimeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(300_000).description('A stream silent for this long ends with TIMEOUT.'),
    maxTokensField: Schema.union(['max_tokens', 'max_completion_tokens']).default('max_tokens').description('Body field that carries the output budget.'),
    providerName: Schema.string().description('What the server is, for telemetry (gen_ai.provider.name, e.g. vllm). Default: openai or deepseek for their own hosts, else openai_compatible.'),
  })
  const labelled = Schema.transform(fields, (config) => ({ ...config, label: config.label ?? defaultLabel(config.baseURL ?? defaults.baseURL, defaults) }))
  // A row without `config:` gets the defaults too (a transform alone passes `undefined` through).
  return labelled.default({}) as Schema<Partial<CompatibleConfig>, CompatibleConfig>
}

/**
 * The provider's own name at its own host; elsewhere the host (with its port) the requests go to,
 * a key-shaped label of it (`sk-….gw.example`) as `***`: every message opens with the label.
 */
function defaultLabel(baseURL: string, defaults: CompatibleDefaults): string {
  const host = hostOf(baseURL)
  return host === hostOf(defaults.baseURL) ? defaults.label : maskKeyShapes(host)
}

/** `host:port` of a base URL (the port only when it is not the scheme's own). */
function hostOf(baseURL: string): string {
  return URL.canParse(baseURL) ? new URL(baseURL).host : baseURL
}

/** Registers the adapter for `config.provider`; a config entry with a built-in model's id overrides the fields it gives. */
export function registerCompatible(ctx: Context, config: CompatibleConfig, dialect?: OpenAiDialect, builtInModels: readonly ModelInfo[] = []) {
  const configured = config.models.map((entry, index) => checkDefaultEffort(entry, overBuiltIn(entry, builtInModels.find((model) => model.id === entry.id)), index))
  const ids = new Set(configured.map((model) => model.id))
  ctx.llm.registerAdapter(config.provider, new OpenAiCompatibleAdapter({
    label: config.label,
    baseURL: config.baseURL,
    apiKeyEnv: config.apiKeyEnv,
    headers: config.headers,
    models: [...builtInModels.filter((model) => !ids.has(model.id)), ...configured],
    streamIdleTimeoutMs: config.streamIdleTimeoutMs,
    maxTokensField: config.maxTokensField,
    ...(config.providerName ? { providerName: config.providerName } : {}),
    ...(dialect ? { dialect } : {}),
  }))
}
