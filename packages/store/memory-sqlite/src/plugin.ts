/** The cordis plugin: opens a `SqliteMemoryStore` from Config and registers it on `ctx.memory`. */

import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { kindOf, ReinError } from '@rein/base'
import type { MemoryStore } from '@rein/memory'
import { toStoreError } from './errors.ts'
import { DEFAULT_BUSY_TIMEOUT_MS, SqliteMemoryStore } from './sqlite-store.ts'

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
  file: Schema.transform(Schema.any(), checkFile).description('The SQLite database file: an absolute path, or one relative to the working directory. Default: $REIN_HOME/memory.db, else ~/.rein/memory.db.'),
}) as Schema<Config, Config>

/**
 * Config `file` when it can name the database; else `CONFIG_INVALID` naming the field. An empty
 * one would resolve to the working directory, and a leading `~` is not expanded (nothing in a
 * cordis.yml is): it would put everyone's memory in a folder named `~` inside the workspace.
 */
function checkFile(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new ReinError('CONFIG_INVALID', `file must be the database file's path, not ${kindOf(value)}`)
  if (value.trim() === '') throw new ReinError('CONFIG_INVALID', 'file is empty: give the database file\'s path, or leave file out for $REIN_HOME/memory.db (else ~/.rein/memory.db)')
  if (value.includes('\0')) throw new ReinError('CONFIG_INVALID', 'file holds a NUL byte, which no path may: give the database file\'s path')
  if (value.startsWith('~')) {
    const home = value.startsWith('~/') ? `, e.g. file: ${join(homedir(), value.slice(2))}` : ''
    throw new ReinError('CONFIG_INVALID', `file "${value}" starts with ~, which is not expanded (it would be a folder named ~ in the working directory): give an absolute path${home}`)
  }
  return value
}

/** The plugin's name. */
export const name = 'memory-sqlite'
/** Services the plugin needs. */
export const inject = ['memory']

/**
 * Opens the database and registers it until the plugin is disposed, which closes it. A file it
 * cannot use (locked, damaged, too new: its `MEMORY_STORE_*` error, naming the file) does not stop
 * the composition — memory is optional, and a broken file must not keep a person from their
 * sessions or from undo: the store registered is `unavailable` with the error — runs get no memory
 * tools and no block, @rein/memory tells people of it once (`memory/unavailable` for the host's
 * notice, or a warning when that event went out already for another cause; it is logged at debug
 * level only here), and every memory call (`rein memory list`) fails with it.
 */
export const apply = async (ctx: Context, config: Config) => {
  const file = resolve(config.file ?? defaultMemoryFile())
  let store: MemoryStore
  try {
    store = await SqliteMemoryStore.open({ file })
  } catch (error) {
    // `open` rejects with `MEMORY_STORE_*` only; anything else is made one too rather than let a
    // failure nobody foresaw stop every command of the composition.
    const failure = toStoreError(error, file, 'opening it', DEFAULT_BUSY_TIMEOUT_MS)
    // Debug only: registering the store makes @rein/memory tell people, once per cause (its
    // `memory/unavailable`, rein's "memory is off for this run", or a warning when that went out
    // already for another cause); a warning here said it a second time, and again at each reload.
    ctx.logger('memory').debug('%s; going on without memory', failure.message)
    store = unavailable(failure)
  }
  try {
    ctx.memory.registerStore(store)
  } catch (error) {
    await store.close?.()
    throw error
  }
}

/** A store marked `unavailable`, every call of which fails with `error`: what a file that could not be opened leaves. */
function unavailable(error: ReinError): MemoryStore {
  const fail = () => Promise.reject(error)
  return { unavailable: error, insert: fail, replace: fail, get: fail, findSame: fail, recall: fail, delete: fail, all: fail }
}
