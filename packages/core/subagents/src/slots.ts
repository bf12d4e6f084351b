/**
 * `maxBackground` over a run tree: the session the user started (its conversation) and all its
 * subagents, however deep, share one count of background children. It is kept here, keyed by the
 * root session's id (`RunIdentity.conversationId`), so a background child starting its own counts
 * against the same places as its parent's starts.
 */

import { ReinError } from '@rein/base'
import type { JobHandle, JobService } from '@rein/jobs'
import type { RunIdentity } from '@rein/tools'

type JobId = JobHandle['jobId']

/** One run tree's background children in this process: what `maxBackground` counts. */
export interface TreeSlots {
  /** Each job started (by id) and the session that owns it, until it ends. */
  readonly jobs: Map<JobId, string>
  /** Starts not yet listed as jobs, per calling session. */
  readonly starting: Map<string, number>
}

/** A place held by one start: `listed` once its job exists (the job holds it then), `release` in any case. */
export interface Place {
  listed(jobId: JobId, done: Promise<unknown>): void
  release(): void
}

/**
 * Holds one of the tree's `maxBackground` places for a start by `caller`, or throws
 * `SUBAGENT_BACKGROUND_LIMIT`. Starts made side by side all await the child's creation, and each
 * counts the others meanwhile. A place frees when the job ends (done, failed or killed, as
 * `job_list` shows it). Only this process's jobs count: a crashed process's children are not
 * continued (their logs are closed).
 */
export function reservePlace(trees: Map<string, TreeSlots>, jobs: JobService, caller: RunIdentity, maxBackground: number): Place {
  const root = caller.conversationId
  const slots = trees.get(root) ?? { jobs: new Map(), starting: new Map() }
  const running = runningJobs(slots, jobs)
  const starting = [...slots.starting.values()].reduce((sum, n) => sum + n, 0)
  if (running.length + starting >= maxBackground) throw limitError(seenBy(caller, jobs, running, slots, starting), starting > 0, maxBackground)
  trees.set(root, slots)
  const owner = caller.sessionId
  slots.starting.set(owner, (slots.starting.get(owner) ?? 0) + 1)
  let held = true
  const forget = () => {
    if (slots.jobs.size === 0 && slots.starting.size === 0 && trees.get(root) === slots) trees.delete(root)
  }
  return {
    listed: (jobId, done) => {
      slots.jobs.set(jobId, owner)
      // Ended jobs are also skipped when counted (by their status): this only keeps the map small.
      void done.then(() => {
        slots.jobs.delete(jobId)
        forget()
      })
    },
    release: () => {
      if (!held) return
      held = false
      const left = (slots.starting.get(owner) ?? 1) - 1
      if (left > 0) slots.starting.set(owner, left)
      else slots.starting.delete(owner)
      forget()
    },
  }
}

/** The tree's jobs still `running`, as jobs tells their owners (the same status `job_list` shows). */
function runningJobs(slots: TreeSlots, jobs: JobService): JobId[] {
  const owners = new Set(slots.jobs.values())
  const running = new Set([...owners].flatMap((owner) => jobs.list({ sessionId: owner }).filter((info) => info.kind === 'subagent' && info.status === 'running').map((info) => info.jobId)))
  return [...slots.jobs.keys()].filter((jobId) => running.has(jobId))
}

/** What fills the tree's places, as the caller can act on it. */
interface Occupancy {
  /** Running jobs the caller can wait for or kill: its own and its subagents'. */
  readonly seen: readonly JobId[]
  /** The caller's own starts of this answer not yet listed. */
  readonly ownStarting: number
  /** Running jobs and starts of the tree's other agents, which it cannot see. */
  readonly others: number
}

function seenBy(caller: RunIdentity, jobs: JobService, running: readonly JobId[], slots: TreeSlots, starting: number): Occupancy {
  const visible = new Set(jobs.list({ sessionId: caller.sessionId }).map((info) => info.jobId))
  const seen = running.filter((jobId) => visible.has(jobId))
  const ownStarting = slots.starting.get(caller.sessionId) ?? 0
  return { seen, ownStarting, others: running.length - seen.length + starting - ownStarting }
}

function limitError({ seen, ownStarting, others }: Occupancy, anyStarting: boolean, maxBackground: number): ReinError {
  const count = seen.length + ownStarting + others
  const which = [
    ...seen,
    ...(ownStarting > 0 ? [`${ownStarting} starting in this answer`] : []),
    ...(others > 0 ? [`${others} of other agents`] : []),
  ].join(', ')
  const state = anyStarting ? 'running or starting' : 'running'
  // Another agent's job is not the caller's to wait for or kill (jobs shows a job to its owner and those above).
  const remedy = seen.length + ownStarting > 0
    ? 'wait for one of the jobs named to end (its notice comes as a message; job_output with wait_ms waits for it) or job_kill one you no longer need, then start this one; or run it without run_in_background'
    : 'none of them is yours to wait for or stop, so run this one without run_in_background'
  return new ReinError('SUBAGENT_BACKGROUND_LIMIT', `${count} background subagent${count === 1 ? ' is' : 's are'} ${state} in this conversation (${which}), the most it may run at once (the session the user started and all its subagents, together): ${remedy}. The limit is maxBackground (${maxBackground}) in the @rein/subagents config, which the user can raise`, { details: { running: seen, starting: ownStarting, others, maxBackground } })
}
