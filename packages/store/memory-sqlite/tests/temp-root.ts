/** Temp folders, stores and entries for the tests; folders removed and stores closed after each test. */

import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { MemoryEntry } from '@rein/memory'
import { afterEach } from 'vitest'
import { SqliteMemoryStore, type SqliteMemoryStoreOptions } from '../src/index.ts'

const roots: string[] = []
const stores: SqliteMemoryStore[] = []

afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()))
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })))
})

/** A fresh folder, removed after the test. */
export async function tempRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'rein-memory-sqlite-'))
  roots.push(root)
  return root
}

/** A store on `<fresh folder>/memory.db` (or `file`), closed after the test. */
export async function openStore(options: Partial<SqliteMemoryStoreOptions> = {}): Promise<SqliteMemoryStore> {
  const store = await SqliteMemoryStore.open({ file: options.file ?? join(await tempRoot(), 'memory.db'), ...options })
  stores.push(store)
  return store
}

let counter = 0

/** A user-scope fact written at t=1000 unless `fields` say otherwise; ids count up from m0001. */
export function entry(fields: Partial<MemoryEntry> = {}): MemoryEntry {
  counter++
  return {
    id: `m${String(counter).padStart(4, '0')}`,
    scope: 'user',
    type: 'fact',
    content: `entry ${counter}`,
    source: { sessionId: 's1' },
    createdAt: 1000,
    updatedAt: 1000,
    ...fields,
  }
}
