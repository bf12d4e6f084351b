/** How checkpoint messages quote a failure. */

import { messageOf, ReinError } from '@rein/base'

/** A ReinError's code before its message (`CHECKPOINT_LOG_DAMAGED: …`), else the message alone. */
export function codedMessage(error: unknown): string {
  return error instanceof ReinError ? `${error.code}: ${error.message}` : messageOf(error)
}
