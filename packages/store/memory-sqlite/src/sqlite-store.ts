/**
 * `SqliteMemoryStore`: the `MemoryStore` seam in one SQLite file (better-sqlite3), WAL so several
 * processes share it, full-text ranking (FTS5, BM25) for recall's query.
 */

import { constants, type Stats } from 'node:fs'
import { chmod, mkdir, stat, type FileHandle } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import Database from 'better-sqlite3'
import { kindOf, makeFilePrivate, messageOf, openPrivateFile, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, ReinError } from '@rein/base'
import type { MemoryEntry, MemoryScope, MemoryStore, MemoryType, RecallQuery } from '@rein/memory'
import { codeOf, toStoreError } from './errors.ts'
import { ENTRY_ORDER, fromRow, toRow, type EntryRow } from './rows.ts'
import { checkVersion, migrate } from './schema.ts'
import { toMatchQuery, toSearchText } from './search-text.ts'

/** How long a statement waits for another process's write to finish before `MEMORY_STORE_LOCKED`. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000

export interface SqliteMemoryStoreOptions {
  /** The database file (made 0600 when missing, and missing folders on its path 0700; an existing folder keeps its mode). A relative path is taken from the working directory. */
  file: string
  /** Default `DEFAULT_BUSY_TIMEOUT_MS`. */
  busyTimeoutMs?: number
}

/** Options from a caller that skipped the types (plain JavaScript, parsed JSON) are `INVALID_ARGS` before any file is touched. */
function checkOptions(options: unknown): asserts options is SqliteMemoryStoreOptions {
  const invalid = (problem: string) => new ReinError('INVALID_ARGS', `SqliteMemoryStore.open: ${problem}`)
  if (typeof options !== 'object' || options === null) throw invalid(`options must be { file, busyTimeoutMs? }, not ${kindOf(options)}`)
  const { file, busyTimeoutMs } = options as Record<string, unknown>
  if (typeof file !== 'string' || file === '' || file.includes('\0')) throw invalid(`file must be the database's path, not ${typeof file === 'string' ? 'an empty text or one with a NUL byte' : kindOf(file)}`)
  if (busyTimeoutMs !== undefined && !(Number.isInteger(busyTimeoutMs) && (busyTimeoutMs as number) >= 0 && (busyTimeoutMs as number) <= 0x7fffffff)) {
    throw invalid(`busyTimeoutMs must be a whole number of ms from 0 to 2147483647, not ${typeof busyTimeoutMs === 'number' ? String(busyTimeoutMs) : kindOf(busyTimeoutMs)}`)
  }
}

/**
 * Opened to create the file ('a'), without blocking: a FIFO put there after the check below fails
 * (ENXIO) instead of holding a thread, and the composition, until something reads it.
 */
const OPEN_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NONBLOCK

/**
 * `MEMORY_STORE_FAILED` when `file` is there and is neither a file nor a folder (a folder fails
 * opening, EISDIR): opening a FIFO blocks until something reads it, and a device (`file: /dev/null`,
 * to go without memory) would be made 0600 — for everyone, when run as root — and get a `-journal`.
 */
function refuseSpecialFile(file: string, stats: Stats | undefined): void {
  if (stats === undefined || stats.isFile() || stats.isDirectory()) return
  const kind = stats.isFIFO() ? 'a FIFO' : stats.isCharacterDevice() ? 'a character device' : stats.isBlockDevice() ? 'a block device' : stats.isSocket() ? 'a socket' : 'not a file'
  throw new ReinError('MEMORY_STORE_FAILED', `memory database ${file} is not a regular file (${kind}); set file to a database file's path, or leave @rein/memory-sqlite out of the composition to go without memory`, { details: { file } })
}

/**
 * What a failure to open `file` for writing was about, for its message: a file that is there (one
 * this user may only read, a folder in its place) was being opened, not created.
 */
async function doing(file: string): Promise<string> {
  return stat(file).then(() => 'opening it', () => 'creating it')
}

const LIVE = 'e.retired_at IS NULL AND e.retired_by IS NULL AND (e.expires_at IS NULL OR e.expires_at > @now)'

/** A `MemoryStore` in one SQLite file. Open with `SqliteMemoryStore.open`; `close` releases the file. */
export class SqliteMemoryStore implements MemoryStore {
  /** Opens (creating and migrating when needed) the file; rejects with `MEMORY_STORE_*` naming it. */
  static async open(options: SqliteMemoryStoreOptions): Promise<SqliteMemoryStore> {
    checkOptions(options)
    const file = resolve(options.file)
    const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS
    let handle: FileHandle
    try {
      // Missing folders are made 0700; one that exists is left as it is — it may be shared on
      // purpose, and the file itself is 0600 whatever its folder allows.
      await mkdir(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE })
      refuseSpecialFile(file, await stat(file).catch(() => undefined))
      handle = await openPrivateFile(file, OPEN_FLAGS)
      // Again on what was opened: a device put there after the check is not made 0600 either.
      await handle.stat().then((stats) => refuseSpecialFile(file, stats)).catch(async (error: unknown) => {
        await handle.close().catch(() => {})
        throw error
      })
    } catch (error) {
      throw toStoreError(error, file, await doing(file), busyTimeoutMs)
    }
    let db: Database.Database | undefined
    try {
      db = new Database(file, { fileMustExist: true, timeout: busyTimeoutMs })
      // A file it refuses (a newer schema, another program's database) keeps its bytes and mode:
      // checked before the mode, the journal or the schema is touched.
      checkVersion(db, file)
      await makeFilePrivate(handle)
      db.pragma('journal_mode = WAL')
      // What is deleted is overwritten, not left in free pages: a forgotten entry is gone from the file.
      db.pragma('secure_delete = ON')
      migrate(db, file)
      await narrowSideFiles(file)
    } catch (error) {
      // Every failure closes what was opened: the plugin goes on without memory, holding nothing.
      db?.close()
      throw toStoreError(error, file, 'opening it', busyTimeoutMs)
    } finally {
      await handle.close().catch(() => {})
    }
    return new SqliteMemoryStore(db, file, busyTimeoutMs)
  }

  /** The database file's absolute path. */
  readonly file: string
  private readonly db: Database.Database
  private readonly busyTimeoutMs: number
  private readonly statements = new Map<string, Database.Statement>()
  /** A delete or changed text since the WAL was last folded in (`foldWal`). */
  private textDropped = false

  private constructor(db: Database.Database, file: string, busyTimeoutMs: number) {
    this.db = db
    this.file = file
    this.busyTimeoutMs = busyTimeoutMs
  }

  async insert(entry: MemoryEntry): Promise<void> {
    this.write('inserting an entry', () => {
      const { lastInsertRowid } = this.statement(`INSERT INTO memory_entries (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((column) => `@${column}`).join(', ')})`).run(toRow(entry))
      this.index(Number(lastInsertRowid), entry.content)
    })
  }

  async replace(entry: MemoryEntry): Promise<void> {
    this.write('replacing an entry', () => {
      const old = this.statement('SELECT seq, content FROM memory_entries WHERE id = ?').get(entry.id) as { seq: number; content: string } | undefined
      if (old === undefined) throw new ReinError('MEMORY_NOT_FOUND', `no memory entry with id ${entry.id}`, { details: { id: entry.id, file: this.file } })
      const { seq } = old
      this.statement(`UPDATE memory_entries SET ${COLUMNS.map((column) => `${column} = @${column}`).join(', ')} WHERE seq = @seq`).run({ ...toRow(entry), seq })
      this.statement('DELETE FROM memory_search WHERE rowid = ?').run(seq)
      this.index(seq, entry.content)
      // A refresh or a retirement keeps the text: only changed text leaves words behind.
      if (old.content !== entry.content) this.dropDeletedWords()
    })
  }

  /**
   * Rewrites the full-text index without the words of deleted text. FTS5 leaves a deleted row's
   * words in the index's segments (secure-delete does not always take the word out with its last
   * row): a forgotten secret would stay in the file. The index is one row per entry, so small.
   */
  private dropDeletedWords(): void {
    this.statement(`INSERT INTO memory_search (memory_search) VALUES ('optimize')`).run()
    this.textDropped = true
  }

  /**
   * Once text was deleted and the change committed: the WAL still holds the pages that had it, so
   * they are folded into the file (zeroed there) and the WAL emptied. Without waiting: a reader of
   * an older snapshot (another process) would hold the checkpoint for the whole busy timeout,
   * blocking the event loop. Until it is done, each later write tries again (the last close does it too).
   */
  private foldWal(): void {
    if (!this.textDropped || this.db.inTransaction || !this.db.open) return
    this.db.pragma('busy_timeout = 0')
    try {
      const [result] = this.db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[]
      if (result?.busy === 0) this.textDropped = false
    } catch {
      // Failing now (a full disk): the next write tries again.
    } finally {
      this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`)
    }
  }

  async get(id: string): Promise<MemoryEntry | undefined> {
    return this.read('reading an entry', () => {
      const row = this.statement('SELECT * FROM memory_entries e WHERE e.id = ?').get(id) as EntryRow | undefined
      return row === undefined ? undefined : fromRow(row)
    })
  }

  async findSame(scope: MemoryScope, projectId: string | undefined, type: MemoryType, normalized: string, now: number): Promise<MemoryEntry | undefined> {
    return this.read('looking for a duplicate', () => {
      const row = this.statement(`SELECT * FROM memory_entries e
        WHERE e.scope = @scope AND e.type = @type AND e.normalized = @normalized
          AND (e.scope = 'user' OR e.project_id = @projectId) AND ${LIVE}
        ORDER BY e.updated_at DESC, e.id LIMIT 1`).get({ scope, projectId: projectId ?? null, type, normalized, now }) as EntryRow | undefined
      return row === undefined ? undefined : fromRow(row)
    })
  }

  async recall(query: RecallQuery & { readonly now: number }): Promise<readonly MemoryEntry[]> {
    return this.read('recalling', () => {
      const parameters: Record<string, unknown> = { now: query.now, limit: toLimit(query.limit), projectId: query.projectId ?? null }
      const scopes: { index: string; where: string }[] = []
      if (query.scopes.includes('user')) scopes.push({ index: 'memory_entries_user', where: `e.scope = 'user'` })
      if (query.scopes.includes('project')) scopes.push({ index: 'memory_entries_project', where: `e.scope = 'project' AND e.project_id = @projectId` })
      if (scopes.length === 0 || parameters.limit === 0 || query.types?.length === 0) return []
      let filter = LIVE
      if (query.types !== undefined) {
        // Each type once: a caller's list may repeat one past SQLite's limit on variables.
        const types = [...new Set(query.types)]
        types.forEach((type, index) => { parameters[`type${index}`] = type })
        filter += ` AND e.type IN (${types.map((_, index) => `@type${index}`).join(', ')})`
      }
      const match = query.query === undefined ? undefined : toMatchQuery(query.query)
      let sql: string
      if (match === undefined) {
        // Each scope's best `limit`, read in its index's order (named: without statistics the planner
        // may pick another index and sort every entry of the scope), then the best of those.
        const best = scopes.map(({ index, where }) => `SELECT seq FROM (SELECT e.seq FROM memory_entries e INDEXED BY ${index} WHERE ${where} AND ${filter} ORDER BY ${ENTRY_ORDER} LIMIT @limit)`)
        sql = `SELECT e.* FROM memory_entries e WHERE e.seq IN (${best.join(' UNION ALL ')}) ORDER BY ${ENTRY_ORDER} LIMIT @limit`
      } else {
        parameters.match = match
        sql = `SELECT e.* FROM memory_search JOIN memory_entries e ON e.seq = memory_search.rowid
          WHERE memory_search MATCH @match AND ${filter} AND (${scopes.map(({ where }) => `(${where})`).join(' OR ')})
          ORDER BY bm25(memory_search), ${ENTRY_ORDER} LIMIT @limit`
      }
      return (this.statement(sql).all(parameters) as EntryRow[]).map(fromRow)
    })
  }

  async delete(id: string): Promise<boolean> {
    return this.write('deleting an entry', () => {
      const seq = this.seqOf(id)
      if (seq === undefined) return false
      this.statement('DELETE FROM memory_entries WHERE seq = ?').run(seq)
      this.statement('DELETE FROM memory_search WHERE rowid = ?').run(seq)
      this.dropDeletedWords()
      return true
    })
  }

  async all(): Promise<readonly MemoryEntry[]> {
    return this.read('listing entries', () => (this.statement('SELECT * FROM memory_entries e ORDER BY e.created_at, e.seq').all() as EntryRow[]).map(fromRow))
  }

  /**
   * `body` in one `BEGIN IMMEDIATE` transaction: the file's write lock is taken up front (waiting
   * up to the busy timeout, then `MEMORY_STORE_LOCKED`) and held until `body` settles, so another
   * process's write waits instead of landing between its steps. The store's write methods inside
   * become savepoints. A throw rolls everything back and is rethrown as it was.
   */
  async atomically<T>(body: () => Promise<T>): Promise<T> {
    this.read('beginning a change', () => this.db.exec('BEGIN IMMEDIATE'))
    try {
      const result = await body()
      this.read('committing a change', () => this.db.exec('COMMIT'))
      this.foldWal()
      return result
    } catch (error) {
      // SQLite may have rolled back already (a failed COMMIT, a full disk); the file may be closed.
      if (this.db.open && this.db.inTransaction) this.db.exec('ROLLBACK')
      throw error
    }
  }

  /** Closes the file (the last process to close folds the WAL back in); later calls are `MEMORY_STORE_CLOSED`. */
  async close(): Promise<void> {
    if (this.db.open) this.db.close()
  }

  private index(seq: number, content: string): void {
    this.statement('INSERT INTO memory_search (rowid, body) VALUES (?, ?)').run(seq, toSearchText(content))
  }

  private seqOf(id: string): number | undefined {
    return (this.statement('SELECT seq FROM memory_entries WHERE id = ?').get(id) as { seq: number } | undefined)?.seq
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql)
    if (statement === undefined) {
      statement = this.db.prepare(sql)
      this.statements.set(sql, statement)
    }
    return statement
  }

  private read<T>(doing: string, body: () => T): T {
    this.checkOpen()
    try {
      return body()
    } catch (error) {
      throw toStoreError(error, this.file, doing, this.busyTimeoutMs)
    }
  }

  /** `body` in one write transaction, begun IMMEDIATE so a busy file is waited for up front, never mid-way. */
  private write<T>(doing: string, body: () => T): T {
    const result = this.read(doing, () => this.db.transaction(body).immediate())
    this.foldWal()
    return result
  }

  private checkOpen(): void {
    if (!this.db.open) throw new ReinError('MEMORY_STORE_CLOSED', `memory database ${this.file} is closed`, { details: { file: this.file } })
  }
}

/**
 * SQLite gives the -wal and -shm files the database's mode; this narrows ones an older run (or
 * another user) left wider. One it may not chmod (another user owns it) is `MEMORY_STORE_FAILED`:
 * other users could read the memory through it.
 */
async function narrowSideFiles(file: string): Promise<void> {
  for (const suffix of ['-wal', '-shm']) {
    const path = file + suffix
    const mode = await stat(path).then((stats) => stats.mode, () => undefined)
    if (mode === undefined || (mode & 0o077) === 0) continue
    await chmod(path, PRIVATE_FILE_MODE).catch((error: unknown) => {
      throw new ReinError('MEMORY_STORE_FAILED', `memory database ${file}: ${path} is open to other users and this process may not make it private (${messageOf(error)}); have its owner run chmod 600 ${path}`, { cause: error, details: { file, sqliteCode: codeOf(error) || undefined } })
    })
  }
}

const COLUMNS = ['id', 'scope', 'project_id', 'type', 'content', 'normalized', 'session_id', 'message_id', 'confidence', 'created_at', 'updated_at', 'expires_at', 'supersedes', 'retired_at', 'retired_by'] as const

/** SQLite's LIMIT: a whole number, -1 for no limit (`Infinity`). */
function toLimit(limit: number): number {
  if (limit === Number.POSITIVE_INFINITY) return -1
  return Number.isFinite(limit) ? Math.max(0, Math.floor(limit)) : 0
}
