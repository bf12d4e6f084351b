/**
 * Built-in catalog: the models rein's built-in composition asks OpenAI for by default, so their
 * context window is known (compaction works) without a `models` entry. Advisory: any other model id
 * is still sent as given; a `models` entry with the same id overrides the fields it gives. No prices: they
 * change too often to ship (`@rein/llm`'s `prices` Config gives costs).
 */

import type { ModelInfo } from '@rein/llm'

/** The built-in catalog of OpenAI models (context windows; no prices), which Config `models` extends. */
export const OPENAI_MODELS: readonly ModelInfo[] = [
  { id: 'gpt-4o-mini', contextWindow: 128_000 },
  { id: 'gpt-4o', contextWindow: 128_000 },
]
