/**
 * Memory across the matrix: heap after a full collection at the start and the end, and the peak of
 * heap plus buffers sampled while cases run. `gc` comes from --expose-gc when the process has it,
 * else from V8's flag set at run time; without either, RSS stands in (rougher, said in the report).
 */

import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

export interface MemoryProbe {
  /** `heap after gc` or `rss`: what `settled()` measures. */
  readonly measure: 'heap after gc' | 'rss'
  /** Bytes in use after a full collection (or RSS). */
  settled(): number
  /** Starts sampling heap + array buffers every `everyMs`; returns a stop function giving the peak. */
  sample(everyMs: number): () => number
}

export function memoryProbe(): MemoryProbe {
  const gc = findGc()
  return {
    measure: gc ? 'heap after gc' : 'rss',
    settled() {
      if (!gc) return process.memoryUsage.rss()
      gc()
      gc()
      return process.memoryUsage().heapUsed
    },
    sample(everyMs) {
      let peak = 0
      const take = () => {
        const usage = process.memoryUsage()
        peak = Math.max(peak, usage.heapUsed + usage.arrayBuffers)
      }
      take()
      const timer = setInterval(take, everyMs)
      timer.unref()
      return () => {
        clearInterval(timer)
        take()
        return peak
      }
    },
  }
}

function findGc(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (typeof exposed === 'function') return exposed
  try {
    // The flag only exposes `gc` to contexts made after it is set.
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as unknown
    return typeof gc === 'function' ? gc as () => void : undefined
  } catch {
    return undefined
  }
}
