/**
 * A request sent again — a retry, a fallback — leaves `llm/resend` in the log, flushed with the
 * failed attempt's record right before it goes out (after any backoff wait): a kill during it is
 * then charged once by repair (cut-attempt.ts). Before a retry's wait the failed attempt's record is
 * written (not fsynced): a kill during the wait keeps the usage the server reported for it, and
 * repair charges nothing more, since no request was in flight.
 */

import type { Resend } from '@rein/llm'
import { messageOf } from '@rein/base'
import type { Session } from '@rein/session'
import { closedAttempt } from './closed-attempt.ts'

/**
 * Logs the attempt about to be sent again and makes the log durable; throws `SESSION_FLUSH_FAILED`.
 * Then the attempt is not sent, and a record without usage says so, closing the mark: a later save
 * of the log must not leave it looking cut off by a kill.
 */
export async function markResend(session: Session, next: Resend): Promise<void> {
  // The runtime leaves out the options it does not send: what is left is the request as sent.
  const { retry, fallback, ...request } = next
  session.append('llm/resend', { request, retry, fallback })
  try {
    await session.flush()
  } catch (error) {
    session.append('llm/attempt', closedAttempt(next, Date.now(), { code: 'ABORTED', message: `not sent: ${messageOf(error)}` }))
    throw error
  }
}

/**
 * Writes the failed attempt's record as its retry's wait begins. A failure to write changes
 * nothing here: the events stay pending, and the flush before the retry reports it.
 */
export function keepFailedAttempt(session: Session): void {
  session.write().catch(() => {})
}
