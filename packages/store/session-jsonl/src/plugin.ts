/** The cordis plugin: builds a `JsonlSessionStore` from Config and registers it on `ctx.sessions`. */

import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import type {} from '@rein/session'
import Schema from '@deepseek-ai/schemastery'
import { MAX_TIMER_MS } from '@rein/base'
import { JsonlSessionStore, type JsonlSessionStoreOptions } from './jsonl-store.ts'

/** `$REIN_HOME/sessions`, else `~/.rein/sessions`: where sessions go when Config names no root. */
export function defaultSessionRoot(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.REIN_HOME ? resolve(env.REIN_HOME) : join(homedir(), '.rein'), 'sessions')
}

/** The plugin's Config after defaults: where the logs go and how long appends wait to be batched. */
export interface Config {
  /** Default: `defaultSessionRoot()`, resolved when the plugin starts. */
  root?: string
  batchDelayMs: number
}

/** The plugin's Config schema (see the README's Config table). */
export const Config: Schema<Partial<Config>, Config> = Schema.object({
  root: Schema.string().description('Folder for the session files. Default: $REIN_HOME/sessions, else ~/.rein/sessions.'),
  batchDelayMs: Schema.natural().max(MAX_TIMER_MS).default(0).description('Milliseconds appended events wait to be written together; 0 = the next tick.'),
})

/** The plugin's name, `session-jsonl`. */
export const name = 'session-jsonl'
/** The plugin needs `ctx.sessions` (`@rein/session`) to register its store on. */
export const inject = ['sessions']

/** Starts the plugin: registers a `JsonlSessionStore` at the Config's root on `ctx.sessions`. */
export const apply = (ctx: Context, config: Config) => {
  ctx.sessions.registerStore(new JsonlSessionStore(resolveStoreOptions(config)))
}

/** The store options a Config stands for: `root` defaults to `defaultSessionRoot()`. */
export function resolveStoreOptions(config: Config): JsonlSessionStoreOptions {
  return { root: config.root ?? defaultSessionRoot(), batchDelayMs: config.batchDelayMs }
}
