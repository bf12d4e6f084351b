/** Temp folders and stores for the tests, removed and closed after each test. */

import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { tempFolders } from '@rein/testkit'
import { afterEach } from 'vitest'
import { JsonlCheckpointStore, type JsonlCheckpointStoreOptions } from '../src/index.ts'

const temp = tempFolders(afterEach, 'rein-checkpoint-jsonl-')

/** A fresh folder, removed after the test. */
export const tempRoot = temp.folder

/** A store keeping each session in `<base>/<id>` (`base`: a fresh folder unless given), closed after the test. */
export async function openStore(options: Partial<JsonlCheckpointStoreOptions> = {}, root?: string) {
  const base = root ?? await tempRoot()
  const folder = async (sessionId: string) => {
    const path = join(base, sessionId)
    await mkdir(path, { recursive: true })
    return path
  }
  const store = temp.closeAfter(new JsonlCheckpointStore({ folder, ...options }))
  return { store, base }
}
