/** The `models` config field every OpenAI-compatible provider shares, and its mapping to `ModelInfo`. */

import Schema from '@deepseek-ai/schemastery'
import { ReinError } from '@rein/base'
import { PricingSchema, type ModelInfo } from '@rein/llm'

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
  pricing: Schema.union([PricingSchema, Schema.const(undefined)]).description('Money per million tokens; enables cost accounting and budgets.'),
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

/**
 * A config entry over the built-in entry of the same id: the fields it gives win, the ones it leaves
 * out keep the built-in's. An entry that only adds `pricing` must not drop the model's window and
 * efforts. A default effort alone picks among the built-in efforts. (The schema makes an absent
 * `reasoningEfforts` an empty list, so an empty list keeps the built-in efforts too.)
 */
export function overBuiltIn(entry: ModelConfig, builtIn: ModelInfo | undefined): ModelInfo {
  const info = toModelInfo(entry)
  if (builtIn === undefined) return info
  const merged: ModelInfo = Object.assign({}, builtIn, info)
  if (info.reasoning === undefined && entry.defaultReasoningEffort !== undefined && builtIn.reasoning) {
    merged.reasoning = { efforts: builtIn.reasoning.efforts, default: entry.defaultReasoningEffort }
  }
  return merged
}

/**
 * `info`, the catalog entry `models[index]` made, if its default effort is one it lists: a default
 * is applied unchecked on every request that names no effort, and one on a model without efforts
 * would be dropped without a word. Else `CONFIG_INVALID`, naming the entry.
 */
export function checkDefaultEffort(entry: ModelConfig, info: ModelInfo, index: number): ModelInfo {
  const effort = entry.defaultReasoningEffort
  if (effort === undefined) return info
  const efforts = info.reasoning?.efforts ?? []
  const at = `models[${index}] (${entry.id}): defaultReasoningEffort "${effort}"`
  if (efforts.length === 0) throw new ReinError('CONFIG_INVALID', `${at} needs reasoningEfforts listing it; the model lists none`)
  if (!efforts.includes(effort)) throw new ReinError('CONFIG_INVALID', `${at} is not one of its reasoning efforts (${efforts.join(', ')})`)
  return info
}
