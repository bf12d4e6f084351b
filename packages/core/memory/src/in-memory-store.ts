/**
 * A memory store that keeps entries in a Map: for tests and for compositions that want memory only
 * while the process runs. Ranking is word overlap, not full-text search.
 */

import { ReinError } from '@rein/base'
import { normalizeContent } from './normalize.ts'
import type { MemoryEntry, MemoryScope, MemoryStore, MemoryType, RecallQuery } from './types.ts'
import { MEMORY_TYPES } from './validate.ts'

/** Keeps entries in memory; nothing survives the process. */
export class InMemoryMemoryStore implements MemoryStore {
  private readonly _entries = new Map<string, MemoryEntry>()
  /** Whether `close` ran (tests check the service closes its store). */
  closed = false

  async insert(entry: MemoryEntry): Promise<void> {
    if (this._entries.has(entry.id)) throw new ReinError('DUPLICATE_MEMORY_ID', `a memory entry with id ${entry.id} exists already`)
    this._entries.set(entry.id, Object.freeze({ ...entry }))
  }

  async replace(entry: MemoryEntry): Promise<void> {
    if (!this._entries.has(entry.id)) throw new ReinError('MEMORY_NOT_FOUND', `no memory entry with id ${entry.id}`)
    this._entries.set(entry.id, Object.freeze({ ...entry }))
  }

  async get(id: string): Promise<MemoryEntry | undefined> {
    return this._entries.get(id)
  }

  async findSame(scope: MemoryScope, projectId: string | undefined, type: MemoryType, normalized: string, now: number): Promise<MemoryEntry | undefined> {
    for (const entry of this._entries.values()) {
      if (!isLive(entry, now) || entry.scope !== scope || entry.type !== type) continue
      if (entry.projectId === projectId && normalizeContent(entry.content) === normalized) return entry
    }
    return undefined
  }

  /** With a query: entries sharing words with it, most shared first; without: type (in `MEMORY_TYPES` order), newest, id. */
  async recall(query: RecallQuery & { readonly now: number }): Promise<readonly MemoryEntry[]> {
    const matches = [...this._entries.values()].filter((entry) => isLive(entry, query.now)
      && query.scopes.includes(entry.scope)
      && (entry.scope === 'user' || entry.projectId === query.projectId)
      && (query.types === undefined || query.types.includes(entry.type)))
    const words = query.query === undefined ? [] : wordsOf(query.query)
    if (words.length === 0) return matches.sort(byTypeNewestId).slice(0, query.limit)
    const phrase = normalizeContent(query.query ?? '')
    const scored = matches.map((entry) => ({ entry, score: score(entry.content, words, phrase) })).filter(({ score }) => score > 0)
    scored.sort((a, b) => b.score - a.score || newestFirst(a.entry, b.entry))
    return scored.slice(0, query.limit).map(({ entry }) => entry)
  }

  async delete(id: string): Promise<boolean> {
    return this._entries.delete(id)
  }

  async all(): Promise<readonly MemoryEntry[]> {
    return [...this._entries.values()].sort((a, b) => a.createdAt - b.createdAt || compareIds(a.id, b.id))
  }

  async close(): Promise<void> {
    this.closed = true
  }
}

function isLive(entry: MemoryEntry, now: number): boolean {
  return entry.retiredAt === undefined && (entry.expiresAt === undefined || entry.expiresAt > now)
}

/** Letters and digits runs, lower-cased; the same words normalizeContent would compare. */
function wordsOf(text: string): string[] {
  return [...new Set(normalizeContent(text).match(/[\p{L}\p{N}]+/gu) ?? [])]
}

/** Shared words, plus one more when the whole query appears as written. */
function score(content: string, words: readonly string[], phrase: string): number {
  const normalized = normalizeContent(content)
  const own = new Set(wordsOf(content))
  const shared = words.filter((word) => own.has(word)).length
  return shared === 0 ? 0 : shared + (phrase !== '' && normalized.includes(phrase) ? 1 : 0)
}

function byTypeNewestId(a: MemoryEntry, b: MemoryEntry): number {
  return MEMORY_TYPES.indexOf(a.type) - MEMORY_TYPES.indexOf(b.type) || newestFirst(a, b)
}

function newestFirst(a: MemoryEntry, b: MemoryEntry): number {
  return b.updatedAt - a.updatedAt || compareIds(a.id, b.id)
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
