/** Temp folders and stores for the tests, removed and closed after each test. */

import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import { JsonlCheckpointStore, type JsonlCheckpointStoreOptions } from '../src/index.ts'

const roots: string[] = []
const stores: JsonlCheckpointStore[] = []

afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()))
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })))
})

/** A fresh folder, removed after the test. */
export async function tempRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'rein-checkpoint-jsonl-'))
  roots.push(root)
  return root
}

/** A store keeping each session in `<base>/<id>` (`base`: a fresh folder unless given), closed after the test. */
export async function openStore(options: Partial<JsonlCheckpointStoreOptions> = {}, root?: string) {
  const base = root ?? await tempRoot()
  const folder = async (sessionId: string) => {
    const path = join(base, sessionId)
    await mkdir(path, { recursive: true })
    return path
  }
  const store = new JsonlCheckpointStore({ folder, ...options })
  stores.push(store)
  return { store, base }
}
