/**
 * A request sent again — a retry, a fallback — leaves `llm/resend` in the log, flushed with the
 * failed attempt's record right before it goes out (after any backoff wait): a kill during it is
 * then charged once by repair (cut-attempt.ts), and a kill during the wait charges nothing.
 */

import type { Resend } from '@rein/llm'
import { messageOf } from '@rein/base'
import type { Session, StepRequest } from '@rein/session'

/**
 * Logs the attempt about to be sent again and makes the log durable; throws `SESSION_FLUSH_FAILED`.
 * Then the attempt is not sent, and a record without usage says so, closing the mark: a later save
 * of the log must not leave it looking cut off by a kill.
 */
export async function markResend(session: Session, next: Resend): Promise<void> {
  const request: StepRequest = { provider: next.provider, model: next.model }
  if (next.maxTokens !== undefined) request.maxTokens = next.maxTokens
  if (next.temperature !== undefined) request.temperature = next.temperature
  if (next.reasoningEffort !== undefined) request.reasoningEffort = next.reasoningEffort
  session.append('llm/resend', { request, retry: next.retry, fallback: next.fallback })
  try {
    await session.flush()
  } catch (error) {
    const now = Date.now()
    session.append('llm/attempt', {
      provider: next.provider, model: next.model, retry: next.retry, fallback: next.fallback, startedAt: now, endedAt: now, shown: false,
      failure: { code: 'ABORTED', message: `not sent: ${messageOf(error)}` },
      ...(next.maxTokens !== undefined ? { maxTokens: next.maxTokens } : {}),
    })
    throw error
  }
}
