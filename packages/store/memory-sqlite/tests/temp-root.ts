/** Temp folders, stores and entries for the tests; folders removed and stores closed after each test. */

import { join } from 'node:path'
import type { MemoryEntry } from '@rein/memory'
import { tempFolders } from '@rein/testkit'
import { afterEach } from 'vitest'
import { SqliteMemoryStore, type SqliteMemoryStoreOptions } from '../src/index.ts'

const temp = tempFolders(afterEach, 'rein-memory-sqlite-')

/** A fresh folder, removed after the test. */
export const tempRoot = temp.folder

/** A store on `<fresh folder>/memory.db` (or `file`), closed after the test. */
export async function openStore(options: Partial<SqliteMemoryStoreOptions> = {}): Promise<SqliteMemoryStore> {
  return temp.closeAfter(await SqliteMemoryStore.open({ file: options.file ?? join(await tempRoot(), 'memory.db'), ...options }))
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
