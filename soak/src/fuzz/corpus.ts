/**
 * Saved fuzz inputs: anything a fuzzer finds is shrunk and written to `soak/corpus/<target>/`, and
 * every saved input is replayed on every run (fast and full), so a fixed defect stays fixed. One
 * input per kind of finding and run is saved. Formats:
 * - `sse/*.json`: `{status, contentType?, end, giantLine?, chunks: [base64…], path}` — what the byte
 *   server sends, piece by piece; replayed through both adapters, directly and through the runtime.
 * - `translator/*.json`: `{payloads, sawDone, deepseek}`; a value too deep to write is `{"$nested": {levels, inner, object}}`.
 * - `tool-args/*.json`: `{name, arguments}` — one `ctx.tools.execute` call.
 * - `session-log/*.jsonl`: the damaged log file itself, loaded (and resumed) under the id its header names.
 */

import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../corpus/', import.meta.url))

/** The fuzz targets, one corpus folder each. */
export type Target = 'sse' | 'translator' | 'tool-args' | 'session-log'

/** Every saved input of `target`, by file name, in name order. */
export function savedInputs(target: Target): { name: string; bytes: Buffer }[] {
  let names: string[]
  try {
    names = readdirSync(join(ROOT, target))
  } catch {
    return []
  }
  return names.filter((name) => !name.startsWith('.') && name !== 'README.md').sort().map((name) => ({ name, bytes: readFileSync(join(ROOT, target, name)) }))
}

/** Saves `bytes` as `<what>-<hash><ext>` under `target` (the same input is saved once) and returns the path. */
export function saveInput(target: Target, what: string, bytes: Uint8Array | string, ext: string): string {
  const data = typeof bytes === 'string' ? Buffer.from(bytes) : Buffer.from(bytes)
  const hash = createHash('sha256').update(data).digest('hex').slice(0, 12)
  const folder = join(ROOT, target)
  mkdirSync(folder, { recursive: true })
  const file = join(folder, `${what.replace(/[^\w.-]+/g, '_').slice(0, 40)}-${hash}${ext}`)
  writeFileSync(file, data)
  return file
}

/**
 * A smaller `input` that still `fails`: removes ever-smaller slices while the failure holds
 * (delta debugging, bounded by `budget` tries). `cut(input, from, to)` removes a slice.
 */
export async function shrink<T>(input: T, length: (value: T) => number, cut: (value: T, from: number, to: number) => T, fails: (value: T) => Promise<boolean>, budget = 300): Promise<T> {
  let best = input
  let size = Math.max(1, Math.floor(length(best) / 2))
  while (size >= 1 && budget > 0) {
    let removed = false
    for (let from = 0; from < length(best) && budget > 0; from += size) {
      const candidate = cut(best, from, Math.min(length(best), from + size))
      budget--
      if (length(candidate) < length(best) && await fails(candidate)) {
        best = candidate
        removed = true
        from -= size
      }
    }
    if (!removed) size = Math.floor(size / 2)
  }
  return best
}
