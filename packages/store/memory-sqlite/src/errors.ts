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
    return new ReinError('MEMORY_STORE_CORRUPT', `memory database ${file} is damaged or not a SQLite database (${messageOf(error)}); move it aside and rein starts an empty one`, { cause: error, details })
  }
  return new ReinError('MEMORY_STORE_FAILED', `memory database ${file}: ${doing} failed: ${messageOf(error)}`, { cause: error, details })
}
