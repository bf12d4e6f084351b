/** The store's failures as `ReinError`s naming the database file, from SQLite's and the file system's errors. */

import { isReinError, messageOf, ReinError } from '@rein/base'

/** The codes this store raises (besides `MEMORY_NOT_FOUND` from `replace`). */
export type MemoryStoreErrorCode =
  | 'MEMORY_STORE_LOCKED'
  | 'MEMORY_STORE_CORRUPT'
  | 'MEMORY_STORE_TOO_NEW'
  | 'MEMORY_STORE_CLOSED'
  | 'MEMORY_STORE_FAILED'

/** SQLite's error code (`SQLITE_BUSY`, `SQLITE_NOTADB`, …), or a Node one (`EACCES`), if any. */
export function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : ''
}


/**
 * `error` (thrown while `doing` something with `file`) as a `ReinError`: another process holding
 * the file too long is `MEMORY_STORE_LOCKED`, a damaged or foreign file `MEMORY_STORE_CORRUPT`,
 * the rest `MEMORY_STORE_FAILED`. A `ReinError` passes through as it is.
 */
export function toStoreError(error: unknown, file: string, doing: string, busyTimeoutMs: number): ReinError {
  if (isReinError(error)) return error
  const code = codeOf(error)
  const details = { file, sqliteCode: code || undefined }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new ReinError('MEMORY_STORE_LOCKED', `memory database ${file} is locked by another process (waited ${busyTimeoutMs} ms while ${doing}); try again when it is done`, { cause: error, details })
  }
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    // With them: the -wal can hold the latest entries, and a new file opened beside it deletes it.
    return new ReinError('MEMORY_STORE_CORRUPT', `memory database ${file} is damaged or not a SQLite database (${messageOf(error)}); move it aside with its -wal and -shm files, if there are any, and rein starts an empty one`, { cause: error, details })
  }
  return new ReinError('MEMORY_STORE_FAILED', `memory database ${file}: ${doing} failed: ${messageOf(error)}${adviceFor(code, file)}`, { cause: error, details })
}

/** Codes that mean the process may not read or write the file or its folder (or nothing may, on a read-only mount). */
const DENIED = new Set(['EACCES', 'EPERM', 'EROFS', 'SQLITE_PERM', 'SQLITE_READONLY', 'SQLITE_CANTOPEN'])

/** Codes that mean the disk is full (SQLite reports a `-shm` it could not grow as an I/O error of its own). */
const FULL = new Set(['SQLITE_FULL', 'SQLITE_IOERR_SHMSIZE', 'ENOSPC'])

/** What to do about a failure the person running rein can fix, after its message. */
function adviceFor(code: string, file: string): string {
  if (FULL.has(code)) return `; free space on the disk holding ${file} (what memory held is kept)`
  if (!DENIED.has(code) && !code.startsWith('SQLITE_READONLY') && !code.startsWith('SQLITE_CANTOPEN')) return ''
  return '; give rein read and write access to the file and its folder (and its -wal and -shm files), or set file to another path'
}
