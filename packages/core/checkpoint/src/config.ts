/** The plugin's Config. */

import Schema from '@deepseek-ai/schemastery'

/** The Config of `@rein/checkpoint` (see the README's Config table). */
export interface CheckpointConfig {
  /** Tools whose writes are recorded before they happen. Default `['write', 'edit', 'multi_edit']` (tool-fs). */
  tools: string[]
}

/** The Config schema of `@rein/checkpoint`. */
export const CheckpointConfig: Schema<Partial<CheckpointConfig>, CheckpointConfig> = Schema.object({
  tools: Schema.array(Schema.string()).default(['write', 'edit', 'multi_edit'])
    .description('Tools whose writes are recorded before they happen (they call run.checkpoint.record).'),
}) as Schema<Partial<CheckpointConfig>, CheckpointConfig>
