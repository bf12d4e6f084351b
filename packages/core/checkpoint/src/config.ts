/** The plugin's Config. */

import Schema from '@deepseek-ai/schemastery'
import { SnapshotConfig } from './snapshot/config.ts'

/** The Config of `@rein/checkpoint` (see the README's Config table). */
export interface CheckpointConfig {
  /** Tools whose writes are recorded before they happen. Default `['write', 'edit', 'multi_edit']` (tool-fs). */
  tools: string[]
  /** Retention: how many of a session's newest turns keep their checkpoints. Default 100. */
  keepTurns: number
  /** Retention: turns older than this many days lose their checkpoints. Default 30. */
  keepDays: number
  /** Retention: the most a session's checkpoints (log and contents) may take, in bytes; the newest turn is always kept. Default 256 MiB. */
  maxSessionBytes: number
  /** How `exec` tools are covered: a workspace snapshot around each call. */
  snapshot: SnapshotConfig
  /** rein's own folder: snapshots and files a rewind moves aside go under it, and walks skip it. */
  home?: string
}

/** What a cordis.yml row may give: every key optional, `snapshot`'s too. */
type CheckpointConfigInput = Partial<Omit<CheckpointConfig, 'snapshot'>> & { snapshot?: Partial<SnapshotConfig> }

/** The Config schema of `@rein/checkpoint`. */
export const CheckpointConfig: Schema<CheckpointConfigInput, CheckpointConfig> = Schema.object({
  tools: Schema.array(Schema.string()).default(['write', 'edit', 'multi_edit'])
    .description('Tools whose writes are recorded before they happen (they call run.checkpoint.record).'),
  keepTurns: Schema.natural().min(1).default(100)
    .description('How many of a session\'s newest turns keep their checkpoints when it is compacted (at session end).'),
  keepDays: Schema.number().min(0).default(30)
    .description('Turns older than this many days lose their checkpoints when the session is compacted; 0: no age limit.'),
  maxSessionBytes: Schema.natural().default(256 * 1024 * 1024)
    .description('The most a session\'s checkpoints may take (log and contents, bytes): oldest turns go first, the newest stays.'),
  home: Schema.string().description('rein\'s own folder: snapshots (<home>/snapshots) and files a rewind moves aside (<home>/recovered) go under it, and walks skip it. Default: $REIN_HOME, else ~/.rein.'),
  snapshot: SnapshotConfig.description('How exec tools (bash) are covered: a workspace snapshot around each call.'),
}) as Schema<CheckpointConfigInput, CheckpointConfig>
