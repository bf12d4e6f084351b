/** The `Config` of the `ctx.jobs` plugin. */

import Schema from '@deepseek-ai/schemastery'

/** The plugin's settings; every field has a default (see the README). */
export interface JobsConfig {
  /** Unread output kept per job, in characters; beyond it the oldest unread output is dropped (and counted). */
  bufferChars: number
  /** Unread output kept per job, in lines; beyond it the oldest unread lines are dropped (and counted in characters). */
  bufferLines: number
  /** Longest `wait_ms` `job_output` accepts. */
  maxWaitMs: number
  /** How long `settle()` waits for running jobs by default before it kills them: the bash tool's maximum. */
  exitWaitMs: number
  /** How long a kill waits for a job's body to return after its signal aborted, before leaving it behind. */
  killGraceMs: number
}

/** What a job keeps of its output, and of the result its end logs. */
export type BufferLimits = Pick<JobsConfig, 'bufferChars' | 'bufferLines'>

/** The schema cordis validates the jobs row's `config` with. */
export const JobsConfig: Schema<Partial<JobsConfig>, JobsConfig> = Schema.object({
  bufferChars: Schema.natural().min(1_000).max(10_000_000).default(16_000)
    .description('Unread output kept per job, in characters; older unread output is dropped and counted.'),
  // Under the agent's spillAfterLines (1,200) with room for the notes around it, as bufferChars is under spillAfterChars.
  bufferLines: Schema.natural().min(10).max(1_000_000).default(1_000)
    .description('Unread output kept per job, in lines; older unread lines are dropped and counted.'),
  maxWaitMs: Schema.natural().min(0).max(3_600_000).default(600_000)
    .description('Longest wait_ms job_output accepts.'),
  exitWaitMs: Schema.natural().min(0).max(86_400_000).default(600_000)
    .description('How long settle() (rein run before it exits) waits for running jobs before killing them.'),
  killGraceMs: Schema.natural().min(0).max(600_000).default(5_000)
    .description('How long a kill waits for the job to stop after its signal aborted.'),
}) as Schema<Partial<JobsConfig>, JobsConfig>
