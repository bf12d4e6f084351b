/** The error codes tool-fs throws, and the one place a Node file-system error becomes one of them. */

import { cutHead, isReinError, ReinError } from '@rein/base'

/** Every code tool-fs raises; the README lists when. */
export type FsErrorCode =
  | 'PATH_OUTSIDE_WORKSPACE'
  | 'NOT_A_REGULAR_FILE'
  | 'INVALID_PATH'
  | 'FILE_NOT_FOUND'
  | 'PERMISSION_DENIED'
  | 'FILE_NOT_READ'
  | 'FILE_CHANGED_SINCE_READ'
  | 'FILE_TOO_LARGE'
  | 'NOT_TEXT'
  | 'EDIT_NOT_FOUND'
  | 'EDIT_AMBIGUOUS'
  | 'EDIT_NO_CHANGE'
  | 'WRITE_FAILED'
  | 'READ_FAILED'
  | 'INVALID_PATTERN'
  | 'GREP_TIMEOUT'
  | 'CHECKPOINT_FAILED'

export function fsError(code: FsErrorCode, message: string, details?: Record<string, unknown>, cause?: unknown): ReinError<FsErrorCode> {
  return new ReinError(code, message, { ...(details ? { details } : {}), ...(cause === undefined ? {} : { cause }) })
}

/** The `code` of a Node system error (`ENOENT`, …), if it is one. */
export function systemCode(error: unknown): string | undefined {
  const code: unknown = error instanceof Error ? Reflect.get(error, 'code') : undefined
  return typeof code === 'string' ? code : undefined
}

/**
 * Why a write is refused with EPERM, which no mode bit gives: a file flag (`chattr +i`, `+a`) or a
 * security module. Said after the file's path.
 */
export const FLAGGED = 'cannot be changed (the system refuses it: EPERM, not its permissions); it may be marked immutable or append-only (lsattr shows it)'

/**
 * Turns a Node error met while doing `action` ("read", "write") on `path` into a typed error the
 * model can act on. A `ReinError` passes through unchanged.
 */
export function fromSystemError(error: unknown, action: 'read' | 'write', path: string): ReinError {
  if (isReinError(error)) return error
  const code = systemCode(error)
  const details = { path, systemCode: code }
  switch (code) {
    case 'ENOENT':
      return fsError('FILE_NOT_FOUND', `${path} does not exist`, details, error)
    case 'ENOTDIR':
      return fsError('FILE_NOT_FOUND', `${path} does not exist: a part of it before the last name is a file, not a folder`, details, error)
    case 'EPERM':
      if (action === 'write') return fsError('PERMISSION_DENIED', `${path} ${FLAGGED}`, details, error)
      return fsError('PERMISSION_DENIED', `permission denied: this process may not ${action} ${path}`, details, error)
    case 'EACCES':
      return fsError('PERMISSION_DENIED', `permission denied: this process may not ${action} ${path}`, details, error)
    case 'ENAMETOOLONG':
      return fsError('INVALID_PATH', `${cutHead(path, 80)}…: a name in this path is longer than the file system allows`, details, error)
    case 'ELOOP':
      return fsError('INVALID_PATH', `${path} goes through a loop of symbolic links`, details, error)
    case 'EISDIR':
      return fsError('NOT_A_REGULAR_FILE', `${path} is a folder, not a file; use glob to list what is in it`, details, error)
    case 'ENOSPC':
    case 'EDQUOT':
      return fsError('WRITE_FAILED', `could not ${action} ${path}: no space left on the device (${code}); the file is unchanged`, details, error)
    case 'EROFS':
      return fsError('PERMISSION_DENIED', `could not ${action} ${path}: the file system is read-only`, details, error)
    default: {
      const reason = error instanceof Error ? error.message : String(error)
      const failed = action === 'write' ? 'WRITE_FAILED' : 'READ_FAILED'
      return fsError(failed, `could not ${action} ${path}: ${reason}${action === 'write' ? '; the file is unchanged' : ''}`, details, error)
    }
  }
}
