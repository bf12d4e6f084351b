/**
 * A request sent again — a retry, a fallback — leaves `llm/resend` in the log, flushed with the
 * failed attempt's record right before it goes out (after any backoff wait): a kill during it is
 * then charged once by repair (cut-attempt.ts), and a kill during the wait charges nothing.
 */

import type { Resend } from '@rein/llm'
import type { Session, StepRequest } from '@rein/session'

/** Logs the attempt about to be sent again and makes the log durable; throws `SESSION_FLUSH_FAILED`. */
export async function markResend(session: Session, next: Resend): Promise<void> {
  const request: StepRequest = { provider: next.provider, model: next.model }
  if (next.maxTokens !== undefined) request.maxTokens = next.maxTokens
  if (next.temperature !== undefined) request.temperature = next.temperature
  if (next.reasoningEffort !== undefined) request.reasoningEffort = next.reasoningEffort
  session.append('llm/resend', { request, retry: next.retry, fallback: next.fallback })
  await session.flush()
}
