/**
 * @rein/jobs: the `ctx.jobs` service — background jobs owned by an agent, the `job_output`,
 * `job_list` and `job_kill` tools, finish notices, and reaping what a crashed process left running.
 */

import { JobService } from './service.ts'

export default JobService
export { JobService, type SettleOptions } from './service.ts'
export { JobsConfig } from './config.ts'
export type {
  JobStatus, KillCause, JobExit, JobRecord, JobRun, StartJob, JobHandle, JobViewer, JobInfo, JobOutput, SettleReport,
} from './types.ts'
