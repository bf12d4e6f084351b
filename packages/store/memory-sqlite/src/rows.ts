/** Entries to table rows and back; the order recall sorts them in. */

import type { MemoryEntry, MemoryScope, MemoryType } from '@rein/memory'
import { normalizeContent } from '@rein/memory'

/** Recall's order after any ranking: type (the `MemoryType` union's order), newest `updated_at` first, id (`e` = memory_entries). */
export const ENTRY_ORDER = 'e.type_rank, e.updated_at DESC, e.id'

/** A memory_entries row as SQLite returns it. */
export interface EntryRow {
  seq: number
  id: string
  scope: MemoryScope
  project_id: string | null
  type: MemoryType
  content: string
  normalized: string
  session_id: string
  message_id: string | null
  confidence: number | null
  created_at: number
  updated_at: number
  expires_at: number | null
  supersedes: string | null
  retired_at: number | null
  retired_by: string | null
}

/** The named parameters an insert or update binds (everything but `seq`). */
export function toRow(entry: MemoryEntry): Omit<EntryRow, 'seq'> {
  return {
    id: entry.id,
    scope: entry.scope,
    project_id: entry.projectId ?? null,
    type: entry.type,
    content: entry.content,
    normalized: normalizeContent(entry.content),
    session_id: entry.source.sessionId,
    message_id: entry.source.messageId ?? null,
    confidence: entry.confidence ?? null,
    created_at: entry.createdAt,
    updated_at: entry.updatedAt,
    expires_at: entry.expiresAt ?? null,
    supersedes: entry.supersedes ?? null,
    retired_at: entry.retiredAt ?? null,
    retired_by: entry.retiredBy ?? null,
  }
}

/** The entry a row holds; columns that are NULL are absent fields. */
export function fromRow(row: EntryRow): MemoryEntry {
  return {
    id: row.id,
    scope: row.scope,
    ...(row.project_id === null ? {} : { projectId: row.project_id }),
    type: row.type,
    content: row.content,
    source: row.message_id === null ? { sessionId: row.session_id } : { sessionId: row.session_id, messageId: row.message_id },
    ...(row.confidence === null ? {} : { confidence: row.confidence }),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.expires_at === null ? {} : { expiresAt: row.expires_at }),
    ...(row.supersedes === null ? {} : { supersedes: row.supersedes }),
    ...(row.retired_at === null ? {} : { retiredAt: row.retired_at }),
    ...(row.retired_by === null ? {} : { retiredBy: row.retired_by }),
  }
}
