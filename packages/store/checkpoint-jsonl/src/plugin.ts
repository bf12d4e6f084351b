/** The cordis plugin: registers a `JsonlCheckpointStore` on `ctx.checkpoints`, folders from `ctx.sessions`. */

import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import type {} from '@rein/checkpoint'
import type {} from '@rein/session'
import { JsonlCheckpointStore } from './jsonl-store.ts'

/** No options: the store lives in each session's folder. */
// oxlint-disable-next-line typescript/no-empty-object-type -- no fields: retention is @rein/checkpoint's Config
export interface Config {}

/** The (empty) Config schema. */
export const Config: Schema<Config, Config> = Schema.object({})

/** The plugin's name. */
export const name = 'checkpoint-jsonl'
/** Services the plugin needs. */
export const inject = ['checkpoints', 'sessions']

/** Registers the store until the plugin is disposed (which closes its open logs). */
export const apply = (ctx: Context) => {
  ctx.checkpoints.registerStore(new JsonlCheckpointStore({ folder: (sessionId) => ctx.sessions.folder(sessionId) }))
}
