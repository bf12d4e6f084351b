/**
 * Model metadata from adapters whose `resolveModel` may answer later (a catalog fetched from the
 * server): answers are kept per adapter, so the synchronous paths (fallback checks, pricing) read
 * what the last asynchronous lookup found.
 */

import type { LlmAdapter, ModelInfo } from './adapter.ts'

export class ModelInfos {
  private readonly known = new WeakMap<LlmAdapter, Map<string, ModelInfo | undefined>>()

  /** What the adapter says now, or what it said last when it answers asynchronously. */
  peek(adapter: LlmAdapter | undefined, provider: string, model: string): ModelInfo | undefined {
    if (!adapter?.resolveModel) return undefined
    const cached = this.known.get(adapter)?.get(key(provider, model))
    if (cached !== undefined) return cached
    const answer = this.ask(adapter, provider, model)
    if (!(answer instanceof Promise)) return answer
    answer.then((info) => this.remember(adapter, provider, model, info), () => {})
    return undefined
  }

  /** Waits for the adapter's answer (or the signal); a failing lookup counts as no metadata. */
  async resolve(adapter: LlmAdapter | undefined, provider: string, model: string, signal?: AbortSignal): Promise<ModelInfo | undefined> {
    if (!adapter?.resolveModel) return undefined
    const cached = this.known.get(adapter)?.get(key(provider, model))
    if (cached !== undefined) return cached
    let info: ModelInfo | undefined
    try {
      info = await this.ask(adapter, provider, model, signal)
    } catch {
      return undefined
    }
    this.remember(adapter, provider, model, info)
    return info
  }

  private ask(adapter: LlmAdapter, provider: string, model: string, signal?: AbortSignal): ModelInfo | undefined | Promise<ModelInfo | undefined> {
    try {
      return adapter.resolveModel?.(provider, model, signal)
    } catch {
      return undefined
    }
  }

  private remember(adapter: LlmAdapter, provider: string, model: string, info: ModelInfo | undefined): void {
    if (info === undefined) return
    let entries = this.known.get(adapter)
    if (!entries) this.known.set(adapter, entries = new Map())
    entries.set(key(provider, model), info)
  }
}

function key(provider: string, model: string): string {
  return `${provider}\u0000${model}`
}
