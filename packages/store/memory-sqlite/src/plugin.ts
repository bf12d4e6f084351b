/** The cordis plugin: opens a `SqliteMemoryStore` from Config and registers it on `ctx.memory`. */

import { constants } from 'node:fs'
import { access, lstat, stat } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import type { Context, Logger } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { kindOf, ReinError } from '@rein/base'
import type { MemoryStore } from '@rein/memory'
import { codeOf, toStoreError } from './errors.ts'
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
 *
 * A file not there yet, in a folder this process may create it in, is created by the first memory
 * write instead: loading the composition (all `rein config` does) makes no file, nor does a read. Any other path is
 * opened now, so what is wrong with it (a FIFO, a device, another program's database, a folder
 * that cannot be made) is said as the composition loads.
 */
export const apply = async (ctx: Context, config: Config) => {
  const file = resolve(config.file ?? defaultMemoryFile())
  const logger = ctx.logger('memory')
  const store = await creatableLater(file) ? openedOnFirstCall(file, logger) : await openNow(file, logger)
  try {
    ctx.memory.registerStore(store)
  } catch (error) {
    await store.close?.()
    throw error
  }
}

/** The store on `file`, opened now; one marked `unavailable` when it cannot be. */
async function openNow(file: string, logger: Logger): Promise<MemoryStore> {
  try {
    return await SqliteMemoryStore.open({ file })
  } catch (error) {
    return unavailable(failed(error, file, 'opening it', logger))
  }
}

/**
 * `error` as the store's `MEMORY_STORE_*`, logged. `open` rejects with those only; anything else is
 * made one too rather than let a failure nobody foresaw stop every command of the composition.
 * Debug only: registering the store makes @rein/memory tell people, once per cause (its
 * `memory/unavailable`, rein's "memory is off for this run", or a warning when that went out
 * already for another cause); a warning here said it a second time, and again at each reload.
 */
function failed(error: unknown, file: string, doing: string, logger: Logger): ReinError {
  const failure = toStoreError(error, file, doing, DEFAULT_BUSY_TIMEOUT_MS)
  logger.debug('%s; going on without memory', failure.message)
  return failure
}

/**
 * Whether `file` is not there and `SqliteMemoryStore.open` could make it later: the nearest folder
 * on its path that exists is one this process may write in. Anything else (it exists, a file on
 * the path where a folder should be, a folder it may not write in) is opened now, for its error.
 */
async function creatableLater(file: string): Promise<boolean> {
  if (await exists(file)) return false
  let folder = dirname(file)
  for (;;) {
    const stats = await stat(folder).catch((error: unknown) => (codeOf(error) === 'ENOENT' ? undefined : null))
    if (stats === null) return false
    if (stats !== undefined) return stats.isDirectory() && await access(folder, constants.W_OK | constants.X_OK).then(() => true, () => false)
    if (dirname(folder) === folder) return false
    folder = dirname(folder)
  }
}

/**
 * A store on a file not there yet, opened (so created) by its first call; calls meanwhile share that
 * open. Failing, it fails every call with the error, and is `unavailable` from then on, as a file
 * that could not be opened at startup is (@rein/memory reads `unavailable` again after a failed
 * call, and turns memory off for runs then); a lock fails only its call. Closed before any call,
 * it never makes the file.
 */
function openedOnFirstCall(file: string, logger: Logger): MemoryStore {
  let opening: Promise<SqliteMemoryStore> | undefined
  let failure: ReinError | undefined
  let closed = false
  const opened = (): Promise<SqliteMemoryStore> => {
    if (closed) return Promise.reject(new ReinError('MEMORY_STORE_CLOSED', `memory database ${file} is closed`, { details: { file } }))
    opening ??= SqliteMemoryStore.open({ file }).catch((error: unknown) => {
      const reason = failed(error, file, 'creating it', logger)
      // Another process creating the same file held it past the busy timeout: that call fails, as its
      // message says to try again, and the next one tries; memory is not turned off for it.
      if (reason.code === 'MEMORY_STORE_LOCKED') opening = undefined
      else failure = reason
      throw reason
    })
    return opening
  }
  // A read while the file is still not there (no write yet, here or in another process) finds
  // nothing, and leaves no file: `rein memory list`, or a session's first memory block, on a home
  // that never saved a memory creates nothing.
  const reading = async <T>(none: T, read: (store: SqliteMemoryStore) => Promise<T>): Promise<T> => {
    if (opening === undefined && !closed && !await exists(file)) return none
    return read(await opened())
  }
  return {
    get unavailable() {
      return failure
    },
    insert: async (entry) => (await opened()).insert(entry),
    replace: async (entry) => (await opened()).replace(entry),
    get: (id) => reading(undefined, (store) => store.get(id)),
    findSame: (scope, projectId, type, normalized, now) => reading(undefined, (store) => store.findSame(scope, projectId, type, normalized, now)),
    recall: (query) => reading([], (store) => store.recall(query)),
    delete: (id) => reading(false, (store) => store.delete(id)),
    all: () => reading([], (store) => store.all()),
    atomically: async (body) => (await opened()).atomically(body),
    close: async () => {
      closed = true
      const store = await opening?.catch(() => undefined)
      await store?.close()
    },
  }
}

/** Whether anything is at `path` (a dangling link counts: opening it is what reports it). */
async function exists(path: string): Promise<boolean> {
  return lstat(path).then(() => true, (error: unknown) => codeOf(error) !== 'ENOENT')
}

/** A store marked `unavailable`, every call of which fails with `error`: what a file that could not be opened leaves. */
function unavailable(error: ReinError): MemoryStore {
  const fail = () => Promise.reject(error)
  return { unavailable: error, insert: fail, replace: fail, get: fail, findSame: fail, recall: fail, delete: fail, all: fail }
}
