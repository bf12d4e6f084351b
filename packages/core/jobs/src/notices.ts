/**
 * Finish notices: one per ended job, handed to its owner with `agent.inject` — at once when the
 * agent is idle (it joins the next turn), else at the agent's next step boundary, so a model that
 * reads the output to the end in the meantime is not told again. Each handed notice is logged
 * (`jobs/notice`), so a later process can tell which never reached the model.
 */

import type { Logger } from '@deepseek-ai/cordis'
import type { Agent } from '@rein/agent'
import type { JsonValue } from '@rein/base'
import type { Session } from '@rein/session'
import { PLUGIN } from './job-log.ts'

/**
 * Notices this process handed to each agent, by job id: they sit in its inbox until its next step,
 * so a reloaded jobs plugin reading the log must not hand them again.
 */
const handed = new WeakMap<object, Set<string>>()

/** A notice waiting for its owner's next step boundary; `text` is made when it is handed. */
export interface PendingNotice {
  jobId: string
  /** False once the owner no longer needs it (it read the output to the end). */
  wanted(): boolean
  text(): string
}

export class Notices {
  private readonly pending = new Map<string, PendingNotice[]>()

  constructor(private readonly find: (sessionId: string) => Agent | undefined, private readonly logger: Logger) {}

  /** Queues a notice; hands it at once when the owner is idle or `now` (the job's world is ending). */
  add(sessionId: string, notice: PendingNotice, now: boolean): void {
    const queue = this.pending.get(sessionId) ?? []
    queue.push(notice)
    this.pending.set(sessionId, queue)
    if (now || this.find(sessionId)?.status === 'idle') this.deliver(sessionId)
  }

  /** Hands every queued notice of a session that is still wanted; each is handed once. */
  deliver(sessionId: string): void {
    const queue = this.pending.get(sessionId)
    if (!queue) return
    this.pending.delete(sessionId)
    const agent = this.find(sessionId)
    for (const notice of queue) if (notice.wanted() && agent) this.hand(agent, notice.jobId, notice.text())
  }

  /** Hands every queued notice of every session (the plugin is going away). */
  deliverAll(): void {
    for (const sessionId of this.pending.keys()) this.deliver(sessionId)
  }

  /** Drops what is queued for a session (its jobs' world ended). */
  forget(sessionId: string): void {
    this.pending.delete(sessionId)
  }

  /** Whether this process already handed the agent a notice for the job. */
  wasHanded(agent: Agent, jobId: string): boolean {
    return handed.get(agent)?.has(jobId) === true
  }

  /** Injects one notice and logs that it was handed; false when the agent takes nothing more (closed). */
  hand(agent: Agent, jobId: string, text: string): boolean {
    try {
      agent.inject({ plugin: PLUGIN, text })
    } catch (error) {
      this.logger.debug('notice for job %s not delivered: %s', jobId, error)
      return false
    }
    const set = handed.get(agent) ?? new Set()
    set.add(jobId)
    handed.set(agent, set)
    appendTo(agent.session, 'jobs/notice', { jobId }, this.logger)
    return true
  }
}

/** Appends a jobs event; a closed session or an undefined type is logged, never thrown at a job. */
export function appendTo(session: Session, type: string, data: JsonValue, logger: Logger): boolean {
  if (session.closed) return false
  try {
    session.append(type, data)
    return true
  } catch (error) {
    logger.warn('could not record %s in session %s: %s', type, session.id, error)
    return false
  }
}
