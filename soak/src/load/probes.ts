/**
 * What the load suite measures about its own process: memory after a full collection, open file
 * descriptors, and unhandled rejections.
 */

import { readdirSync, readlinkSync } from 'node:fs'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

const MB = 1024 * 1024

/**
 * A full garbage collection. vitest's workers do not run with --expose-gc (the root config is shared);
 * the flag can still be set at run time, and a fresh context then sees `gc`.
 */
const collect: () => void = (() => {
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as () => void
})()

/** Memory after a full collection (twice, with a turn between, so finalizers and weak refs settle). */
export interface MemorySample {
  rssMb: number
  heapUsedMb: number
  externalMb: number
}

/** Collects fully, then reads `process.memoryUsage()` in MB. */
export async function settledMemory(): Promise<MemorySample> {
  collect()
  await nextTurn()
  collect()
  const usage = process.memoryUsage()
  return { rssMb: usage.rss / MB, heapUsedMb: usage.heapUsed / MB, externalMb: (usage.external + usage.arrayBuffers) / MB }
}

/** The most resident memory the process has had so far, in MB (the kernel's high-water mark). */
export function peakRssMb(): number {
  return (process.resourceUsage().maxRSS * 1024) / MB
}

/** The process's open descriptors, each as what it points at (`socket:[…]`, a path, `pipe:[…]`). */
export function openFds(): string[] {
  const fds: string[] = []
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      fds.push(readlinkSync(`/proc/self/fd/${fd}`))
    } catch {
      // The descriptor readdir itself used, closed by now.
    }
  }
  return fds
}

/** Descriptors open now that were not in `before` (by target, counted), for the report. */
export function fdsAdded(before: readonly string[], after: readonly string[]): string[] {
  const left = new Map<string, number>()
  for (const target of before) left.set(target, (left.get(target) ?? 0) + 1)
  const added: string[] = []
  for (const target of after) {
    const count = left.get(target) ?? 0
    if (count > 0) left.set(target, count - 1)
    else added.push(target)
  }
  return added
}

/** Counts unhandled rejections and process warnings from now until `stop()`. */
export function watchProcess() {
  const rejections: string[] = []
  const warnings: string[] = []
  const onRejection = (reason: unknown) => { rejections.push(String(reason instanceof Error ? reason.stack ?? reason.message : reason)) }
  const onWarning = (warning: Error) => { warnings.push(`${warning.name}: ${warning.message}`) }
  process.on('unhandledRejection', onRejection)
  process.on('warning', onWarning)
  return {
    rejections,
    warnings,
    stop() {
      process.off('unhandledRejection', onRejection)
      process.off('warning', onWarning)
    },
  }
}
