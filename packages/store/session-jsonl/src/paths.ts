/** Session ids as file names: the one check that keeps every session path inside the store's root. */

import { join, resolve } from 'node:path'
import { ReinError } from '@rein/base'

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

export interface SessionPaths {
  /** `<root>/<id>.jsonl`: the log. */
  file: string
  /** `<root>/<id>.lock`: the pid of the process that has the session open. */
  lock: string
  /**
   * `<root>/<id>.files`, absolute: the session's folder. Not `<root>/<id>`, which would be the log
   * or the lock of the session whose id lacks a `.jsonl` or `.lock` ending; the three suffixes end
   * in different letters, so no two sessions' paths can meet.
   */
  folder: string
}

export function isSessionId(id: string): boolean {
  return SESSION_ID.test(id)
}

/** Paths of session `id` under `root`; rejects an id that is not a plain file-name stem. */
export function sessionPaths(root: string, id: string): SessionPaths {
  if (!isSessionId(id)) {
    throw new ReinError('INVALID_SESSION_ID', `session id ${JSON.stringify(id)} is not allowed; use 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit`, { details: { id } })
  }
  return { file: join(root, `${id}.jsonl`), lock: join(root, `${id}.lock`), folder: resolve(root, `${id}.files`) }
}
