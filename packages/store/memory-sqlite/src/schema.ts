/**
 * The database's schema and its migrations. `PRAGMA user_version` is the schema version: migration
 * N takes a database from version N - 1 to N. A migration, once released, never changes: a new
 * schema is a new entry at the end.
 */

import type Database from 'better-sqlite3'
import { ReinError } from '@rein/base'

const MIGRATIONS: readonly string[] = [
  // 1: the entries; type_rank is the MemoryType union's order (recall's first sort key). Recall
  // without a query walks one of the two partial indexes per scope in its order, stopping at the
  // limit; they hold every column that filter reads. memory_search is the full-text index (see
  // search-text.ts for its text; contentless: the content lives in memory_entries, rowid = seq).
  `CREATE TABLE memory_entries (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL CHECK (scope IN ('user', 'project')),
    project_id TEXT,
    type TEXT NOT NULL CHECK (type IN ('fact', 'preference', 'decision', 'episode', 'procedure')),
    content TEXT NOT NULL,
    normalized TEXT NOT NULL,
    session_id TEXT NOT NULL,
    message_id TEXT,
    confidence REAL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    expires_at INTEGER,
    supersedes TEXT,
    retired_at INTEGER,
    retired_by TEXT,
    type_rank INTEGER NOT NULL GENERATED ALWAYS AS (
      CASE type WHEN 'fact' THEN 0 WHEN 'preference' THEN 1 WHEN 'decision' THEN 2 WHEN 'episode' THEN 3 ELSE 4 END
    ) VIRTUAL
  ) STRICT;
  CREATE INDEX memory_entries_same ON memory_entries (scope, type, normalized);
  CREATE INDEX memory_entries_created ON memory_entries (created_at, seq);
  CREATE INDEX memory_entries_user ON memory_entries (type_rank, updated_at DESC, id, type, expires_at, retired_at, retired_by)
    WHERE scope = 'user';
  CREATE INDEX memory_entries_project ON memory_entries (project_id, type_rank, updated_at DESC, id, type, expires_at, retired_at, retired_by)
    WHERE scope = 'project';
  CREATE VIRTUAL TABLE memory_search USING fts5 (
    body, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
  );`,
]

/** What `checkVersion` reads of a file, in one snapshot. */
interface SchemaState {
  version: number
  anyTable: number
  ours: number
}

/** The schema version this build writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.length

/**
 * Brings `db` to `SCHEMA_VERSION`. Refuses a file with a newer version (`MEMORY_STORE_TOO_NEW`) and
 * a file with tables but no version (`MEMORY_STORE_CORRUPT`: some other program's database). The
 * write lock is taken only when a migration is due, so opening a current file (`rein memory list`)
 * does not wait for, or fail behind, another process's write.
 */
export function migrate(db: Database.Database, file: string): void {
  if (checkVersion(db, file) === SCHEMA_VERSION) return
  // One write transaction, the version read again inside: two processes opening a new file at
  // once migrate it once.
  db.transaction(() => {
    for (let next = checkVersion(db, file) + 1; next <= SCHEMA_VERSION; next++) {
      db.exec(MIGRATIONS[next - 1]!)
      db.pragma(`user_version = ${next}`)
    }
  }).immediate()
}

/**
 * The file's schema version, when this build can read or migrate it; else `MEMORY_STORE_TOO_NEW` or,
 * for another program's database (tables and no version, or a version without rein's table),
 * `MEMORY_STORE_CORRUPT`.
 */
export function checkVersion(db: Database.Database, file: string): number {
  // One statement, so one snapshot: read apart, another process's first migration could commit in
  // between, and its tables would look like another program's under the version read before it.
  const { version, anyTable, ours } = db.prepare<[], SchemaState>(`SELECT
    (SELECT user_version FROM pragma_user_version) AS version,
    EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table') AS anyTable,
    EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'memory_entries') AS ours`).get() ?? { version: 0, anyTable: 0, ours: 0 }
  if (version > SCHEMA_VERSION) {
    throw new ReinError('MEMORY_STORE_TOO_NEW', `memory database ${file} has schema version ${version}, newer than this rein reads (${SCHEMA_VERSION}): upgrade rein, or point memory-sqlite's file elsewhere`, { details: { file, version, supported: SCHEMA_VERSION } })
  }
  // Other programs set user_version too: a version without migration 1's table is not rein's.
  const foreign = version === 0 ? anyTable === 1 : ours === 0
  if (foreign) {
    throw new ReinError('MEMORY_STORE_CORRUPT', `memory database ${file} holds tables but no rein memory schema: it is another program's database; point memory-sqlite's file elsewhere`, { details: { file } })
  }
  return version
}
