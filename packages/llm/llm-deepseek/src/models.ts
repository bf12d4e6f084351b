/**
 * Built-in catalog. Advisory: any other model id is still sent as given. Prices change too often to
 * ship; add `pricing` to a `models` entry (or `@rein/llm`'s `prices` Config) to get costs.
 */

import type { ModelInfo } from '@rein/llm'
import { DEEPSEEK_EFFORTS } from './dialect.ts'

const thinking = { efforts: DEEPSEEK_EFFORTS, default: 'high' }

/** The built-in catalog of DeepSeek models (context windows, reasoning efforts; no prices), which Config `models` extends. */
export const DEEPSEEK_MODELS: readonly ModelInfo[] = [
  { id: 'deepseek-v4-pro', contextWindow: 1_000_000, reasoning: thinking },
  { id: 'deepseek-v4-flash', contextWindow: 1_000_000, reasoning: thinking },
  { id: 'deepseek-chat', contextWindow: 131_072 },
  { id: 'deepseek-reasoner', contextWindow: 131_072 },
]
