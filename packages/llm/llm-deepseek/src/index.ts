/**
 * @rein/llm-deepseek: the DeepSeek API on `ctx.llm` (route `deepseek`). The wire is OpenAI's, so the
 * transport is `@rein/llm-openai`'s; this package adds DeepSeek's defaults, catalog and dialect.
 */

import type { Context } from '@deepseek-ai/cordis'
import { compatibleConfig, registerCompatible, type CompatibleConfig } from '@rein/llm-openai'
import { deepSeekDialect } from './dialect.ts'
import { DEEPSEEK_MODELS } from './models.ts'

export const name = 'llm-deepseek'
export const inject = ['llm']

export type Config = CompatibleConfig
export const Config = compatibleConfig({ provider: 'deepseek', label: 'DeepSeek', baseURL: 'https://api.deepseek.com', apiKeyEnv: 'DEEPSEEK_API_KEY' })

export const apply = (ctx: Context, config: Config) => {
  registerCompatible(ctx, config, deepSeekDialect, DEEPSEEK_MODELS)
}

export { deepSeekDialect, DEEPSEEK_EFFORTS } from './dialect.ts'
export { DEEPSEEK_MODELS } from './models.ts'
