/**
 * What the model reads when the store fails. A store's message names its file and tells people
 * what to do ("move it aside"); the model can do nothing with either, so it reads a plain sentence
 * with the same code, and people get the original (logged here, or through `memory/unavailable`).
 */

import type { Logger } from '@deepseek-ai/cordis'
import { ReinError, isReinError } from '@rein/base'

const SAID_TO_MODEL: Readonly<Record<string, string>> = {
  MEMORY_STORE_CORRUPT: 'memory is off for the rest of this session (its store is damaged); go on without it',
  MEMORY_STORE_LOCKED: 'memory is busy (another rein process is writing to it); try again later',
}

const OTHER_FAILURE = 'memory could not be used just now (its store failed); go on without it'

/** Any other failure that turned memory off (the store became `unavailable`): no later request offers the tools. */
const OFF_FAILURE = 'memory is off for the rest of this session (its store failed); go on without it'

/**
 * Failures the service tells people itself, once per cause (a damaged store turns memory off:
 * `memory/unavailable`, or a warning when that event went out already for another cause): logged
 * at debug level here, or people read them twice.
 */
const TOLD_BY_SERVICE = new Set(['MEMORY_STORE_CORRUPT'])

/** Whether `code` is a store's failure rather than a refusal the model can act on (`INVALID_ARGS`, `MEMORY_NOT_FOUND`). */
function isStoreFailure(code: string): boolean {
  return code.startsWith('MEMORY_STORE_') || code === 'NO_MEMORY_STORE'
}

/**
 * Runs a tool's body; a store failure it throws is logged for people and rethrown worded for the
 * model. `off` says whether memory is now off for runs (the service told people already).
 */
export async function shielded<T>(tool: string, logger: Logger, off: () => boolean, body: () => Promise<T>): Promise<T> {
  try {
    return await body()
  } catch (error) {
    throw forModel(tool, error, logger, off) ?? error
  }
}

/**
 * `error` as the model may read it when it is a store's failure (logged for people, with what
 * `tool` was doing), else `undefined`: a refusal the model can act on is passed on as it is. When
 * `off()` (the failure turned memory off: the service told people, once) it is logged at debug level.
 */
export function forModel(tool: string, error: unknown, logger: Logger, off: () => boolean): ReinError | undefined {
  if (!isReinError(error) || !isStoreFailure(error.code)) return undefined
  const isOff = off()
  const told = SAID_TO_MODEL[error.code] ?? (isOff ? OFF_FAILURE : OTHER_FAILURE)
  logger[TOLD_BY_SERVICE.has(error.code) || isOff ? 'debug' : 'warn']('%s failed; the model was told only "%s": %s', tool, told, error.message)
  return new ReinError(error.code, told, { cause: error })
}
