/** Temp folders for the tests, removed after each test. */

import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'

const roots: string[] = []

afterEach(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })))
})

/** A fresh folder, removed after the test. */
export async function tempRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'rein-checkpoint-jsonl-'))
  roots.push(root)
  return root
}
