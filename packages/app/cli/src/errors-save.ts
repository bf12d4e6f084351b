/**
 * A session that could not be saved, told to a rein user: what happened to the sessions folder and
 * what to do about it. The store's message is advice to its API callers ("append them again from
 * seq 13", "flush again"), which a person at a terminal cannot follow; its typed details (the errno,
 * the log's file) say the same thing in terms the CLI rewords.
 */

import { dirname } from 'node:path'
import { errorCauses, isReinError, messageOf } from '@rein/base'

/** What a failed save says about the disk, from the store's `SESSION_WRITE_FAILED`. */
export interface SaveFailure {
  sessionId: string
  /** The system error's code (ENOSPC, EROFS…), when the store names one. */
  errno?: string
  /** The session's log, when the store names it: its folder is the sessions folder. */
  file?: string
  /** False when nothing of the session reached the disk yet (its first save failed): there is no log to resume. */
  logged: boolean
  /** The innermost cause's message: said when the errno is not one worded here. */
  reason: string
}

/** The store's write failure under `error` (`SESSION_FLUSH_FAILED` wraps it), or undefined when there is none. */
export function saveFailureOf(error: unknown): SaveFailure | undefined {
  const failure = errorCauses(error).find((link) => isReinError(link, 'SESSION_WRITE_FAILED'))
  return isReinError(failure) ? fromDetails(failure.details, failure.cause) : undefined
}

function fromDetails(details: Readonly<Record<string, unknown>> | undefined, cause: unknown): SaveFailure | undefined {
  const sessionId = details?.id
  if (typeof sessionId !== 'string') return undefined
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined)
  const errno = text(details?.errno)
  const file = text(details?.file)
  return {
    sessionId,
    ...(errno === undefined ? {} : { errno }),
    ...(file === undefined ? {} : { file }),
    logged: typeof details?.fromSeq === 'number' && details.fromSeq > 0,
    reason: messageOf(cause),
  }
}

/** `session <id> could not be saved: <what happened>; <what to do>, then rein resume <id>`. */
export function unsavedText(failure: SaveFailure): string {
  const { sessionId: id } = failure
  const folder = failure.file === undefined ? undefined : dirname(failure.file)
  const { happened, remedy } = diskTrouble(failure, folder)
  // A first save that failed left no log: there is nothing to resume, the task is run again.
  const then = failure.logged ? `then rein resume ${id} (the log keeps what was saved before)` : 'then run it again (nothing of it was saved)'
  return `session ${id} could not be saved: ${happened}; ${remedy}, ${then}`
}

/** What the errno means for the sessions folder, and what a person does about it. */
function diskTrouble(failure: SaveFailure, folder: string | undefined): { happened: string; remedy: string } {
  const theFolder = folder === undefined ? 'the sessions folder' : `the sessions folder ${folder}`
  const disk = `the disk holding ${folder ?? 'the sessions folder'}`
  switch (failure.errno) {
    case 'ENOSPC':
      return { happened: `no space left on ${disk}`, remedy: 'free space' }
    case 'EDQUOT':
      return { happened: `your disk quota is used up on ${disk}`, remedy: 'free space' }
    case 'EFBIG':
      return { happened: `the log grew past the largest file allowed here (ulimit -f, or ${disk})`, remedy: 'raise the limit' }
    case 'EROFS':
      return { happened: `${theFolder} is read-only`, remedy: 'make it writable (mount its disk read-write)' }
    case 'EACCES':
    case 'EPERM':
      return { happened: `rein may not write in ${theFolder}`, remedy: 'give it write permission' }
    case 'EIO':
      return { happened: `${disk} failed to write (EIO)`, remedy: 'check the disk' }
    default:
      return { happened: `writing in ${theFolder} failed (${failure.reason})`, remedy: 'fix that' }
  }
}
