/**
 * Model metadata from adapters whose `resolveModel` may answer later (a catalog fetched from the
 * server): answers, "none" included, are kept per adapter, so the synchronous paths (fallback
 * checks, pricing) read what the one asynchronous lookup found.
 */

import type { LlmAdapter, ModelInfo } from './adapter.ts'

export class ModelInfos {
  private readonly known = new WeakMap<LlmAdapter, Map<string, ModelInfo | undefined>>()

  /** What the adapter says now, or what it said when it answered asynchronously. */
  peek(adapter: LlmAdapter | undefined, provider: string, model: string): ModelInfo | undefined {
    if (!adapter?.resolveModel) return undefined
    const entries = this.known.get(adapter)
    const id = key(provider, model)
    if (entries?.has(id)) return entries.get(id)
    const answer = this.ask(adapter, provider, model)
    if (!(answer instanceof Promise)) return answer
    answer.then((info) => this.remember(adapter, id, info), () => {})
    return undefined
  }

  /**
   * Waits for the adapter's answer, or for `signal` (then: undefined, asked again next time). A
   * failing lookup counts as no metadata.
   */
  async resolve(adapter: LlmAdapter | undefined, provider: string, model: string, signal?: AbortSignal): Promise<ModelInfo | undefined> {
    if (!adapter?.resolveModel) return undefined
    const id = key(provider, model)
    const entries = this.known.get(adapter)
    if (entries?.has(id)) return entries.get(id)
    const answer = this.ask(adapter, provider, model, signal)
    if (!(answer instanceof Promise)) return answer
    try {
      const info = await untilAborted(answer, signal)
      this.remember(adapter, id, info)
      return info
    } catch {
      return undefined
    }
  }

  private ask(adapter: LlmAdapter, provider: string, model: string, signal?: AbortSignal): ModelInfo | undefined | Promise<ModelInfo | undefined> {
    try {
      return adapter.resolveModel?.(provider, model, signal)
    } catch {
      return undefined
    }
  }

  private remember(adapter: LlmAdapter, id: string, info: ModelInfo | undefined): void {
    let entries = this.known.get(adapter)
    if (!entries) this.known.set(adapter, entries = new Map())
    entries.set(id, info)
  }
}

/** `promise`, unless `signal` aborts first (then it rejects with the reason); a lookup that ignores its signal cannot hold the caller. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise
  if (signal.aborted) return Promise.reject(signal.reason as Error)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

function key(provider: string, model: string): string {
  return `${provider}\u0000${model}`
}
