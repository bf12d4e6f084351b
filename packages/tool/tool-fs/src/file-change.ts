/**
 * What `write`, `edit` and `multi_edit` share: the checks before a file is replaced, the replace
 * itself, the canonical value `{path, operation, before, after}`, and its diff card.
 */

import { createHash } from 'node:crypto'
import { constants } from 'node:fs'
import { access, lstat } from 'node:fs/promises'
import { dirname, relative, resolve } from 'node:path'
import type {} from '@rein/checkpoint'
import type { FrozenJson, JsonValue } from '@rein/base'
import type { DurableToolResult, FileChange, RecoverCall, RecoverContext, ToolResultView, ToolRun } from '@rein/tools'
import { removeTempLeftovers, writeAtomically } from './atomic-write.ts'
import { hunksOf } from './diff-view.ts'
import { FLAGGED, fromSystemError, fsError, systemCode } from './errors.ts'
import { loadTextFile, tooLarge, type TextFile } from './text-file.ts'
import { callScope, readsOf, type FsToolContext } from './tool-context.ts'
import { openScope, resolvePath, type Resolved } from './workspace.ts'
import { cutHead } from '@rein/base'

/** The value of every file-changing tool: the whole text before (`null` for a new file) and after. */
export const changeValue = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: { type: 'string', required: true },
    operation: { type: 'string', enum: ['create', 'update'], required: true },
    before: { oneOf: [{ type: 'string' }, { type: 'null' }], required: true },
    after: { type: 'string', required: true },
    replacements: { type: 'integer', description: 'places changed (edit, multi_edit)' },
  },
} as const

/** The target, checked: in the workspace, and if it exists, a text file this session read and that has not changed since. */
export interface CheckedTarget {
  resolved: Resolved
  existing: TextFile | undefined
}

export async function checkTarget(context: FsToolContext, run: ToolRun, path: string): Promise<CheckedTarget> {
  const scope = await callScope(context, run)
  if (path.endsWith('/')) throw fsError('INVALID_PATH', `${JSON.stringify(cutHead(path, 80))} ends with /, so it names a folder; give the name of the file to write`, { path })
  const resolved = await resolvePath(scope, path, 'write')
  if (!resolved.exists) {
    // Every listing, and every result that names the file, would break its line there.
    if (hasControl(path)) throw fsError('INVALID_PATH', `${JSON.stringify(cutHead(path, 80))} holds a line break or another control character; a new file's name may not`, { path: resolved.display })
    return { resolved, existing: undefined }
  }
  const existing = await loadTextFile(resolved, resolved.allowed, context.config.maxFileBytes)
  readsOf(context, run).check(resolved.real, resolved.display, existing.snapshot)
  try {
    await access(resolved.real, constants.W_OK)
  } catch (error) {
    // EROFS (a read-only mount) and the rest: the same typed errors a write would give.
    const code = systemCode(error)
    if (code !== 'EACCES' && code !== 'EPERM') throw fromSystemError(error, 'write', resolved.display)
    // EPERM from access(W_OK) is no mode bit: a file flag (chattr +i, +a) or a security module.
    const why = code === 'EPERM' ? FLAGGED : 'is read-only (its permissions forbid writing it)'
    throw fsError('PERMISSION_DENIED', `${resolved.display} ${why}`, { path: resolved.display }, error)
  }
  return { resolved, existing }
}

/** Replaces the file with `text` (keeping a byte-order mark it had) and notes it as this session's latest view. */
export async function replaceText(context: FsToolContext, run: ToolRun, target: CheckedTarget, text: string): Promise<void> {
  const { resolved, existing } = target
  const bytes = Buffer.from((existing?.bom && !text.startsWith('\uFEFF') ? '\uFEFF' : '') + text, 'utf8')
  if (bytes.length > context.config.maxFileBytes) throw tooLarge(resolved.display, bytes.length, context.config.maxFileBytes)
  await recordCheckpoint(context, run, target, bytes)
  const stat = await writeAtomically(resolved, resolved.allowed, bytes, existing?.stat, context.hooks)
  readsOf(context, run).record(resolved.real, { size: bytes.length, mtimeMs: stat.mtimeMs, hash: createHash('sha256').update(bytes).digest('hex') })
}

/**
 * With @rein/checkpoint loaded (`run.checkpoint`), the change is recorded durably first, against
 * the workspace root's real path, so the turn can be rewound; a write whose record failed does
 * not happen. The before-bytes are the file as loaded: valid UTF-8 with its byte-order mark; the
 * mode is the one the file had when loaded; the folders to create are counted just before the record.
 */
async function recordCheckpoint(context: FsToolContext, run: ToolRun, target: CheckedTarget, after: Uint8Array): Promise<void> {
  if (!run.checkpoint || target.resolved.area !== 'workspace') return
  const { resolved, existing } = target
  const scope = await callScope(context, run)
  const before = existing ? Buffer.from((existing.bom ? '\uFEFF' : '') + existing.text, 'utf8') : null
  const createdFolders = existing ? 0 : await missingFolders(dirname(resolved.real), scope.rootReal)
  try {
    await run.checkpoint.record({
      root: scope.rootReal, path: relative(scope.rootReal, resolved.real), existed: existing !== undefined, before, after,
      // Its permission bits, so a rewind that must create it again (a later command deleted it) restores them.
      ...(existing ? { mode: existing.stat.mode & 0o7777 } : {}),
      // The folders the write is about to make (mkdir -p), so a rewind that removes the file removes them too.
      ...(createdFolders > 0 ? { createdFolders } : {}),
    })
  } catch (error) {
    throw fsError('CHECKPOINT_FAILED', `${resolved.display} was not written: its checkpoint could not be saved (${error instanceof Error ? error.message : String(error)}), so the change could not be undone`, { path: resolved.display }, error)
  }
}

/**
 * How many folders, up from `folder` and below `root`, do not exist: what the write's `mkdir -p`
 * will make. Counting stops at the first name that exists (or cannot be looked at): the mkdir
 * makes nothing above it.
 */
async function missingFolders(folder: string, root: string): Promise<number> {
  let count = 0
  for (let current = folder; current !== root && current !== dirname(current); current = dirname(current)) {
    const missing = await lstat(current).then(() => false, (error: unknown) => systemCode(error) === 'ENOENT')
    if (!missing) break
    count++
  }
  return count
}

/** Most characters the diff card's changes keep in the log. */
const CARD_CHARS = 16_000

interface ChangeMeta {
  path: string
  changes: { before: string | null; after: string }[]
  shortened: boolean
}

/** The diff card's data, kept beside the result: each changed region with context, shortened past `CARD_CHARS`. */
export function changeMeta(value: FrozenJson<{ path: string; before: string | null; after: string }>): JsonValue {
  const { path, before, after } = value
  const meta: ChangeMeta = { path, changes: [], shortened: false }
  let room = CARD_CHARS
  const keep = (text: string) => {
    const kept = cutHead(text, room)
    if (kept.length < text.length) meta.shortened = true
    room -= kept.length
    return kept
  }
  if (before === null) {
    meta.changes.push({ before: null, after: keep(after) })
    return { ...meta }
  }
  const hunks = hunksOf(before, after, 3) ?? [{ before: before.split('\n'), after: after.split('\n') }]
  for (const hunk of hunks) {
    if (room <= 0) {
      meta.shortened = true
      break
    }
    meta.changes.push({ before: keep(hunk.before.join('\n')), after: keep(hunk.after.join('\n')) })
  }
  return { ...meta }
}

/** The diff card from the kept meta; none for a failure or foreign meta. */
export function changeCard(title: string, result: DurableToolResult): ToolResultView | undefined {
  const meta = result.meta
  if (result.isError || typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined
  const { path, changes, shortened } = meta
  if (typeof path !== 'string' || !Array.isArray(changes)) return undefined
  const out: FileChange[] = []
  for (const change of changes) {
    if (typeof change !== 'object' || change === null || Array.isArray(change)) return undefined
    const { before, after } = change
    if ((before !== null && typeof before !== 'string') || typeof after !== 'string') return undefined
    out.push({ path, before, after })
  }
  return { card: 'diff', title: shortened === true ? `${title} (diff shortened)` : title, changes: out }
}

/**
 * `recover` of the tools that write a file: a call rein was killed in may have left its temporary
 * file beside the target; it is removed. The outcome stays unknown (the rename may or may not have
 * happened), so the model is told to check.
 */
export function recoverWrite(context: FsToolContext) {
  return async (call: RecoverCall<{ path: string }>, run: RecoverContext): Promise<undefined> => {
    const root = context.config.workspaceRoot === undefined ? run.workspaceRoot : resolve(context.config.workspaceRoot)
    try {
      await removeTempLeftovers(await resolvePath(await openScope(root, undefined), call.args.path, 'write'))
    } catch (error) {
      run.logger.warn('%s: could not look for a temporary file the call left: %s', call.callId, error)
    }
    return undefined
  }
}

/** Whether `text` holds a control character (a line break, a tab, DEL). */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || code === 0x7f) return true
  }
  return false
}
