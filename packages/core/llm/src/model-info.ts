/**
 * Model metadata from adapters whose `resolveModel` may answer later (a catalog fetched from the
 * server). One lookup per model and adapter: its answer, "none" included, is kept, so the
 * synchronous paths (fallback checks, pricing) read it; a lookup still pending past the deadline
 * counts as "none" until it answers, so a catalog that never answers holds nothing up twice.
 */

import { raceSignal } from '@rein/base'
import type { LlmAdapter, ModelInfo } from './adapter.ts'
import { isPrice, type Pricing } from './usage.ts'

type Entry =
  | { kind: 'known'; info: ModelInfo | undefined }
  | { kind: 'pending'; answer: Promise<ModelInfo | undefined>; deadline: AbortSignal }

export class ModelInfos {
  private readonly entries = new WeakMap<LlmAdapter, Map<string, Entry>>()

  constructor(private readonly timeoutMs: number) {}

  /** What the adapter says now, or what its lookup found; starts a lookup in the background. */
  peek(adapter: LlmAdapter | undefined, provider: string, model: string): ModelInfo | undefined {
    if (!adapter?.resolveModel) return undefined
    const entry = this.entry(adapter, key(provider, model))
    if (entry) return entry.kind === 'known' ? entry.info : undefined
    const answer = this.ask(adapter, provider, model)
    if (!(answer instanceof Promise)) return answer
    this.track(adapter, key(provider, model), answer)
    return undefined
  }

  /**
   * Waits for the adapter's answer — at most until `signal` aborts or the lookup's deadline passes
   * (then: undefined). A failing lookup counts as no metadata and is asked again next time.
   */
  async resolve(adapter: LlmAdapter | undefined, provider: string, model: string, signal?: AbortSignal): Promise<ModelInfo | undefined> {
    if (!adapter?.resolveModel) return undefined
    const id = key(provider, model)
    let entry = this.entry(adapter, id)
    if (!entry) {
      const answer = this.ask(adapter, provider, model, signal)
      if (!(answer instanceof Promise)) return answer
      entry = this.track(adapter, id, answer)
    }
    if (entry.kind === 'known') return entry.info
    if (entry.deadline.aborted) return undefined
    try {
      return await raceSignal(entry.answer, signal ? AbortSignal.any([signal, entry.deadline]) : entry.deadline)
    } catch {
      return undefined
    }
  }

  private ask(adapter: LlmAdapter, provider: string, model: string, signal?: AbortSignal): ModelInfo | undefined | Promise<ModelInfo | undefined> {
    try {
      const answer: unknown = adapter.resolveModel?.(provider, model, signal)
      return isThenable(answer) ? Promise.resolve(answer).then(checkedInfo) : checkedInfo(answer)
    } catch {
      return undefined
    }
  }

  private entry(adapter: LlmAdapter, id: string): Entry | undefined {
    return this.entries.get(adapter)?.get(id)
  }

  private track(adapter: LlmAdapter, id: string, answer: Promise<ModelInfo | undefined>): Entry {
    let entries = this.entries.get(adapter)
    if (!entries) this.entries.set(adapter, entries = new Map())
    const pending: Entry = { kind: 'pending', answer, deadline: AbortSignal.timeout(this.timeoutMs) }
    entries.set(id, pending)
    answer.then(
      (info) => entries.set(id, { kind: 'known', info }),
      () => { if (entries.get(id) === pending) entries.delete(id) },
    )
    return pending
  }
}

function key(provider: string, model: string): string {
  return `${provider}\u0000${model}`
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as Partial<PromiseLike<unknown>>).then === 'function'
}

const isCount = (value: unknown): boolean => Number.isInteger(value) && (value as number) > 0

/**
 * A catalog's answer as the runtime reads it. Catalogs are plugins' data, often a server's JSON: a
 * field of the wrong shape is dropped, not read (a NaN price would make every cost NaN, which no
 * budget stops at; efforts that are no list would throw in the middle of a stream). The answer
 * itself when it is well formed, as it nearly always is; no object is no entry.
 */
function checkedInfo(answer: unknown): ModelInfo | undefined {
  if (typeof answer !== 'object' || answer === null) return undefined
  const info = answer as ModelInfo
  const wrong: ('contextWindow' | 'maxTokens' | 'reasoning' | 'pricing')[] = []
  if (info.contextWindow !== undefined && !isCount(info.contextWindow)) wrong.push('contextWindow')
  if (info.maxTokens !== undefined && !isCount(info.maxTokens)) wrong.push('maxTokens')
  if (info.reasoning !== undefined && !isReasoning(info.reasoning)) wrong.push('reasoning')
  if (info.pricing !== undefined && !isPricing(info.pricing)) wrong.push('pricing')
  if (wrong.length === 0) return info
  const kept: ModelInfo = { ...info }
  for (const key of wrong) delete kept[key]
  return kept
}

function isReasoning(reasoning: unknown): boolean {
  if (typeof reasoning !== 'object' || reasoning === null) return false
  const { efforts, default: effort } = reasoning as Partial<NonNullable<ModelInfo['reasoning']>>
  return Array.isArray(efforts) && efforts.every((each) => typeof each === 'string') && (effort === undefined || typeof effort === 'string')
}

function isPricing(pricing: unknown): boolean {
  if (typeof pricing !== 'object' || pricing === null) return false
  const { input, output, cacheRead, cacheWrite } = pricing as Partial<Pricing>
  return isPrice(input) && isPrice(output) && (cacheRead === undefined || isPrice(cacheRead)) && (cacheWrite === undefined || isPrice(cacheWrite))
}
