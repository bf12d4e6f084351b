/**
 * @rein/jobs: the `ctx.jobs` service — background jobs owned by an agent, the `job_output`,
 * `job_list` and `job_kill` tools, finish notices, and reaping what a crashed process left running.
 */

import { JobService } from './service.ts'

/** The plugin: `ctx.jobs`, loaded with `name: '@rein/jobs'`. */
export default JobService
/** The `ctx.jobs` service class (the default export), for typing and `ctx.plugin`. */
export { JobService } from './service.ts'
/** Options of `ctx.jobs.settle`: how long to wait, for which session's jobs, until which signal. */
export type { SettleOptions } from './service.ts'
/** The plugin's Config schema and type (see the README's Config table). */
export { JobsConfig } from './config.ts'
/** Where a job stands: `running`, `done`, `failed` or `killed`. */
export type { JobStatus } from './types.ts'
/** Why a job was killed: `kill`, `owner`, `disposed`, `exit` or `lost`. */
export type { KillCause } from './types.ts'
/** How a finished job's process ended: exit code or signal. */
export type { JobExit } from './types.ts'
/** What a later process needs to reap a job after a crash: process group and marker. */
export type { JobRecord } from './types.ts'
/** What a job's body gets: its id, signal, and how to report output, its end and its record. */
export type { JobRun } from './types.ts'
/** What `ctx.jobs.start` takes. */
export type { StartJob } from './types.ts'
/** What `ctx.jobs.start` returns: `{kind: 'background', jobId}` and a non-enumerable `done`. */
export type { JobHandle } from './types.ts'
/** Who asks about jobs: a session id (a run identity fits). */
export type { JobViewer } from './types.ts'
/** A frozen snapshot of one job, as `list`, `read`, `kill` and `wait` give it. */
export type { JobInfo } from './types.ts'
/** What `ctx.jobs.read` returns: new output, what was dropped, and the job's state. */
export type { JobOutput } from './types.ts'
/** What `ctx.jobs.settle` did: the jobs that finished while it waited and those it killed. */
export type { SettleReport } from './types.ts'
/** A job a dead process left without an end, as the `jobs/lost` event hands it to its producer. */
export type { LostJob } from './types.ts'
