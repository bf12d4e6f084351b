/**
 * @rein/llm-deepseek: the DeepSeek API on `ctx.llm` (route `deepseek`). The wire is OpenAI's, so the
 * transport is `@rein/llm-openai`'s; this package adds DeepSeek's defaults, catalog and dialect.
 */

import type { Context } from '@deepseek-ai/cordis'
import { compatibleConfig, registerCompatible, type CompatibleConfig } from '@rein/llm-openai'
import { deepSeekDialect } from './dialect.ts'
import { DEEPSEEK_MODELS } from './models.ts'

/** The plugin's name, `llm-deepseek`. */
export const name = 'llm-deepseek'
/** The plugin needs `ctx.llm` (`@rein/llm`) to register its adapter on. */
export const inject = ['llm']

/** The plugin's Config: `@rein/llm-openai`'s `CompatibleConfig`, with DeepSeek's defaults. */
export type Config = CompatibleConfig
/** The plugin's Config schema, defaulting to DeepSeek: route `deepseek`, `https://api.deepseek.com`, key in `DEEPSEEK_API_KEY`. */
export const Config = compatibleConfig({ provider: 'deepseek', label: 'DeepSeek', baseURL: 'https://api.deepseek.com', apiKeyEnv: 'DEEPSEEK_API_KEY' })

/** Starts the plugin: serves the Config's route on `ctx.llm` with DeepSeek's dialect and the built-in catalog plus the Config's models. */
export const apply = (ctx: Context, config: Config) => {
  registerCompatible(ctx, config, deepSeekDialect, DEEPSEEK_MODELS)
}

export { deepSeekDialect, DEEPSEEK_EFFORTS } from './dialect.ts'
export { DEEPSEEK_MODELS } from './models.ts'
