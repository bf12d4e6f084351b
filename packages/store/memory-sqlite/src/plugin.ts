/** The cordis plugin: opens a `SqliteMemoryStore` from Config and registers it on `ctx.memory`. */

import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import type {} from '@rein/memory'
import { SqliteMemoryStore } from './sqlite-store.ts'

/** `$REIN_HOME/memory.db`, else `~/.rein/memory.db`: the database when Config names no file. */
export function defaultMemoryFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.REIN_HOME ? resolve(env.REIN_HOME) : join(homedir(), '.rein'), 'memory.db')
}

/** The plugin's options. */
export interface Config {
  /** Default: `defaultMemoryFile()`, resolved when the plugin starts. */
  file?: string
}

/** The Config schema. */
export const Config: Schema<Config, Config> = Schema.object({
  file: Schema.string().description('The SQLite database file. Default: $REIN_HOME/memory.db, else ~/.rein/memory.db.'),
})

/** The plugin's name. */
export const name = 'memory-sqlite'
/** Services the plugin needs. */
export const inject = ['memory']

/**
 * Opens the database (a locked, damaged or too new file fails the plugin with its `MEMORY_STORE_*`
 * error) and registers it until the plugin is disposed, which closes it.
 */
export const apply = async (ctx: Context, config: Config) => {
  const store = await SqliteMemoryStore.open({ file: config.file ?? defaultMemoryFile() })
  try {
    ctx.memory.registerStore(store)
  } catch (error) {
    await store.close()
    throw error
  }
}
