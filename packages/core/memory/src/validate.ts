/** Fail-closed checks of what callers give `ctx.memory`: drafts, patches and recall queries. */

import { randomBytes } from 'node:crypto'
import { codePointCount, HIDDEN_CHARACTER, kindOf, LONE_SURROGATE, ReinError } from '@rein/base'
import { secretKind, secretVariableIn } from './secrets.ts'
import type { MemoryDraft, MemoryEntry, MemoryPatch, MemoryScope, MemoryType, RecallQuery } from './types.ts'

/** Every scope, in the order the README lists them. */
export const MEMORY_SCOPES: readonly MemoryScope[] = Object.freeze(['user', 'project'])

/** Every type, in the order the README lists them. */
export const MEMORY_TYPES: readonly MemoryType[] = Object.freeze(['fact', 'preference', 'decision', 'episode', 'procedure'])

/** `mem_` and 12 random base64url characters (72 bits). */
export function newMemoryId(): string {
  return `mem_${randomBytes(9).toString('base64url')}`
}

/** Throws `INVALID_ARGS` naming every problem of `draft`; returns it with its content trimmed. */
export function checkDraft(draft: MemoryDraft, maxContentChars: number, now: number): MemoryDraft {
  anObject('memory write', draft)
  const problems: string[] = []
  if (!isScope(draft.scope)) problems.push(`scope must be one of ${MEMORY_SCOPES.join(', ')}`)
  else if (draft.scope === 'project' && !nonEmpty(draft.projectId)) problems.push('a project entry needs a projectId')
  else if (draft.scope === 'user' && draft.projectId !== undefined) problems.push('a user entry has no projectId (it holds for every project)')
  else if (draft.scope === 'project') problems.push(...wholeCharacters('projectId', draft.projectId))
  if (!isType(draft.type)) problems.push(`type must be one of ${MEMORY_TYPES.join(', ')}`)
  problems.push(...contentProblems(draft.content, maxContentChars))
  if (typeof draft.source !== 'object' || draft.source === null || !nonEmpty(draft.source.sessionId)) problems.push('source.sessionId must be a non-empty string')
  else if (draft.source.messageId !== undefined && !nonEmpty(draft.source.messageId)) problems.push('source.messageId must be a non-empty string')
  else problems.push(...wholeCharacters('source.sessionId', draft.source.sessionId), ...wholeCharacters('source.messageId', draft.source.messageId))
  problems.push(...confidenceProblems(draft.confidence), ...expiryProblems(draft.expiresAt, now))
  if (draft.supersedes !== undefined && !nonEmpty(draft.supersedes)) problems.push('supersedes must be an entry id')
  refuse('memory write', problems)
  return { ...draft, content: draft.content.trim() }
}

/**
 * Throws `INVALID_ARGS` naming every problem of `content`, as `checkDraft` and `checkPatch` would
 * (`what`: `memory write`, `memory update`): for a tool's call, checked before anyone is asked about
 * it, so a question never quotes a key nor asks about what could only be refused.
 */
export function checkContent(what: string, content: unknown, maxContentChars: number): void {
  refuse(what, contentProblems(content, maxContentChars))
}

/**
 * A correction stays in the scope (and project) of what it corrects: else a project write, which
 * needs less approval, could retire a user entry every project reads, or another project's entry.
 * `INVALID_ARGS` otherwise.
 */
export function checkSameScope(draft: Pick<MemoryDraft, 'scope' | 'projectId'>, target: Pick<MemoryEntry, 'id' | 'scope' | 'projectId'>): void {
  const id = target.id
  if (target.scope !== draft.scope) {
    throw new ReinError('INVALID_ARGS', `a correction keeps its scope: ${id} is a ${target.scope} entry; write the correction with scope ${target.scope}`, { details: { id, scope: target.scope } })
  }
  if (target.projectId !== draft.projectId) {
    throw new ReinError('INVALID_ARGS', `a correction keeps its scope: ${id} is an entry of another project; write the correction there`, { details: { id } })
  }
}

/** `MEMORY_RETIRED`: `entry` was superseded, so `action` (`update`, `supersede`) cannot be done to it. */
export function retired(entry: Pick<MemoryEntry, 'id' | 'retiredBy'>, action: string): ReinError {
  return new ReinError('MEMORY_RETIRED', `cannot ${action} memory ${entry.id}: ${entry.retiredBy ?? 'a later entry'} superseded it already`, { details: { id: entry.id, retiredBy: entry.retiredBy } })
}

/** Throws `INVALID_ARGS` naming every problem of `patch`, or when it changes nothing. */
export function checkPatch(patch: MemoryPatch, maxContentChars: number, now: number): MemoryPatch {
  anObject('memory update', patch)
  const problems: string[] = []
  if (patch.content === undefined && patch.type === undefined && patch.confidence === undefined && patch.expiresAt === undefined) {
    problems.push('give at least one of content, type, confidence, expiresAt')
  }
  if (patch.content !== undefined) problems.push(...contentProblems(patch.content, maxContentChars))
  if (patch.type !== undefined && !isType(patch.type)) problems.push(`type must be one of ${MEMORY_TYPES.join(', ')}`)
  problems.push(...confidenceProblems(patch.confidence))
  if (patch.expiresAt !== null) problems.push(...expiryProblems(patch.expiresAt, now))
  refuse('memory update', problems)
  return patch.content === undefined ? patch : { ...patch, content: patch.content.trim() }
}

/** Throws `INVALID_ARGS` for unknown scopes or types, a project recall without a project, a bad `limit` or `now`. */
export function checkQuery(query: RecallQuery): void {
  anObject('memory recall', query)
  const problems: string[] = []
  if (!Array.isArray(query.scopes) || !query.scopes.every(isScope)) problems.push(`scopes must list ${MEMORY_SCOPES.join(' and/or ')}`)
  else if (query.scopes.includes('project') && !nonEmpty(query.projectId)) problems.push('a recall of project entries needs a projectId')
  if (query.types !== undefined && (!Array.isArray(query.types) || !query.types.every(isType))) problems.push(`types must list some of ${MEMORY_TYPES.join(', ')}`)
  if (query.query !== undefined && typeof query.query !== 'string') problems.push('query must be a string')
  else if (query.query !== undefined && !hasWord(query.query)) problems.push('query has no letters or digits to search for: give words, or leave query out for the newest entries')
  if (typeof query.limit !== 'number' || !Number.isInteger(query.limit) || query.limit < 1) problems.push('limit must be an integer ≥ 1')
  if (query.now !== undefined && !isTime(query.now)) problems.push('now must be a whole number of epoch milliseconds')
  refuse('memory recall', problems)
}

/**
 * Whether `query` holds a letter or digit once NFKC-normalized, as stores compare words: a few
 * letters (half-width ﾞ, Arabic presentation forms like ﹰ, ͺ) become marks, and a query left with
 * no word would be no text filter at all — every entry.
 */
export function hasWord(query: string): boolean {
  return /[\p{L}\p{N}]/u.test(query.normalize('NFKC'))
}

function contentProblems(content: unknown, max: number): string[] {
  if (typeof content !== 'string' || content.trim() === '') return ['content must be a non-empty string']
  const problems: string[] = []
  // Counted as given, before trimming: as the tool's schema (maxLength) counts, so the model and a
  // caller of ctx.memory get the same answer for the same text.
  const length = codePointCount(content)
  if (length > max) problems.push(`content is ${length} characters; the most is ${max}: say it shorter, or split it into separate entries`)
  // What people see in `rein memory list` must be what the model reads.
  // SQLite stores text as UTF-8, where half a character cannot be: it would come back changed.
  if (LONE_SURROGATE.test(content)) problems.push('content holds half a character (a lone UTF-16 surrogate, often a cut emoji): write the whole character, or remove it')
  const hidden = HIDDEN_CHARACTER.exec(content)?.[0]
  if (hidden !== undefined) problems.push(`content holds a character nobody sees (U+${(hidden.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}): remove it`)
  // Named by kind only: the error reaches the model and logs, which must not get the key either.
  const secret = secretKind(content)
  if (secret !== undefined) problems.push(`content looks like a secret (${secret}): memory is sent to the model in every session; never save keys`)
  const variable = secretVariableIn(content)
  if (variable !== undefined) problems.push(`content holds the value of the environment variable ${variable}, a secret: memory is sent to the model in every session; never save keys`)
  return problems
}

/**
 * A lone surrogate in an id the entry is kept under: a store that keeps UTF-8 (SQLite) would give
 * it back changed, so the entry would no longer be of its project (the tools could not reach it).
 */
function wholeCharacters(field: string, value: string | undefined): string[] {
  return value !== undefined && LONE_SURROGATE.test(value) ? [`${field} holds half a character (a lone UTF-16 surrogate), which the store could only keep changed`] : []
}

function confidenceProblems(confidence: unknown): string[] {
  if (confidence === undefined) return []
  // NaN fails both comparisons.
  return typeof confidence === 'number' && confidence >= 0 && confidence <= 1 ? [] : ['confidence must be a number from 0 to 1']
}

/** A store keeps times in integer columns (SQLite STRICT): a fraction or a huge number must be refused here, not fail there. */
function expiryProblems(expiresAt: unknown, now: number): string[] {
  if (expiresAt === undefined) return []
  if (!isTime(expiresAt)) return ['expiresAt must be a whole number of epoch milliseconds']
  return expiresAt <= now ? ['expiresAt is not in the future: such an entry would never be recalled'] : []
}

/** Epoch milliseconds as a store can keep them: a safe integer. */
function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value)
}

/** `INVALID_ARGS` unless `id` is a non-empty string: a host's wrong value must not reach the store's query. */
export function checkId(id: unknown, what: string): void {
  requireText(id, what, "id must be an entry's id (mem_…)")
}

/** `INVALID_ARGS` unless `root` is a non-empty string (a folder's path). */
export function checkRoot(root: unknown): void {
  requireText(root, 'memory projectIdFor', "the workspace root must be a folder's path")
}

function requireText(value: unknown, what: string, wanted: string): void {
  if (typeof value !== 'string' || value === '') refuse(what, [`${wanted}, a non-empty string, not ${value === '' ? 'an empty one' : kindOf(value)}`])
}

function refuse(what: string, problems: readonly string[]): void {
  if (problems.length > 0) throw new ReinError('INVALID_ARGS', `${what} refused: ${problems.join('; ')}`, { details: { problems } })
}

function isScope(value: unknown): value is MemoryScope {
  return MEMORY_SCOPES.includes(value as MemoryScope)
}

function isType(value: unknown): value is MemoryType {
  return MEMORY_TYPES.includes(value as MemoryType)
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== ''
}

/** A caller that passes no object at all (null, a string) gets `INVALID_ARGS`, not a TypeError. */
function anObject(what: string, value: unknown): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse(what, ['give an object'])
}
