/** The `models` config field every OpenAI-compatible provider shares, and its mapping to `ModelInfo`. */

import Schema from '@deepseek-ai/schemastery'
import type { ModelInfo } from '@rein/llm'

/** One `models` config entry. */
export interface ModelConfig {
  id: string
  contextWindow?: number
  maxTokens?: number
  reasoningEfforts?: string[]
  defaultReasoningEffort?: string
  pricing?: { input: number; output: number; cacheRead?: number; cacheWrite?: number }
}

/** The schema of a `models` config entry. */
export const ModelConfig: Schema<ModelConfig> = Schema.object({
  id: Schema.string().required().description('Model id as the server names it.'),
  contextWindow: Schema.natural().description('Context window in tokens.'),
  maxTokens: Schema.natural().description('Output budget when a request names none.'),
  reasoningEfforts: Schema.array(Schema.string()).description('Reasoning efforts the model accepts, in order.'),
  defaultReasoningEffort: Schema.string().description('Effort used when a request names none.'),
  // A union with undefined keeps an absent `pricing` absent; a bare object schema would demand its fields.
  pricing: Schema.union([Schema.object({
    input: Schema.number().min(0).required().description('Per million uncached input tokens.'),
    output: Schema.number().min(0).required().description('Per million output tokens.'),
    cacheRead: Schema.number().min(0).description('Per million cached input tokens. Default: input.'),
    cacheWrite: Schema.number().min(0).description('Per million cache-write tokens. Default: input.'),
  }), Schema.const(undefined)]).description('Money per million tokens; enables cost accounting and budgets.'),
}) as Schema<ModelConfig>

/** A config entry as the catalog's `ModelInfo`. */
export function toModelInfo(model: ModelConfig): ModelInfo {
  return {
    id: model.id,
    ...(model.contextWindow !== undefined ? { contextWindow: model.contextWindow } : {}),
    ...(model.maxTokens !== undefined ? { maxTokens: model.maxTokens } : {}),
    ...(model.reasoningEfforts?.length ? {
      reasoning: {
        efforts: model.reasoningEfforts,
        ...(model.defaultReasoningEffort !== undefined ? { default: model.defaultReasoningEffort } : {}),
      },
    } : {}),
    ...(model.pricing ? { pricing: model.pricing } : {}),
  }
}
