/**
 * The `ctx.checkpoints` service: records file changes before covered tools make them, and rewinds
 * a session's files to their state before a turn, skipping whatever changed since.
 */

import { realpath } from 'node:fs/promises'
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { Context, Service } from '@deepseek-ai/cordis'
import { ReinError, listedPath } from '@rein/base'
import type { Session } from '@rein/session'
import type { RunIdentity } from '@rein/tools'
import { CheckpointConfig } from './config.ts'
import { unreadableSkipped, verifiedBlob } from './stored-content.ts'
import { absentAsBefore, blockedByKind, filesBack, foreseen, removeEmptyFolders } from './blocked.ts'
import { absentAlready, foldersBack, foreseeFolders, makeFolder, setMadeModes, planFolder, removeMadeFolders, type RecordsOf } from './folders.ts'
import { IS_NOW_A_DIRECTORY, modeBackOf, planFile, recordsToUndo, withModeDone } from './plan.ts'
import { giveModeBack, refusal, removeFile, removeLeftovers, writeAtomically } from './restore.ts'
import { goneRoots } from './gone-roots.ts'
import { parentProblem } from './parents.ts'
import { asideChecked, discardCopy, keepCopy, setAside, setAsideFolder } from './set-aside.ts'
import { reinHome } from './snapshot/config.ts'
import { defineRewindEvent, inConversation, noticeTarget, recordInConversation, releaseTarget, runningIn, tellConversation, type LiveAgent } from './rewind-notice.ts'
import { planRetention } from './retention.ts'
import type { CompactReport } from './types.ts'
import { codedMessage } from './error-text.ts'
import { coverExecCalls, notCovered, snapshotCovers, type SnapshotNotes } from './snapshot/coverage.ts'
import { cutOffCommands, cutOffLine } from './snapshot/cut-off.ts'
import type {
  CheckpointEntry, CheckpointHandle, CheckpointRecord, CheckpointStore, CutOffCommand, FailedItem, FileChange, PlanItem, RewindPlan, RewindResult,
} from './types.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    checkpoints: CheckpointService
  }
}

declare module '@rein/tools' {
  interface ToolRunFields {
    /** Records a file change before the tool makes it (from `@rein/checkpoint`); absent without a session and turn. */
    checkpoint: CheckpointHandle
  }
}

/** The part of `ctx.agents` (@rein/agent) rewind needs, looked up when used so agents may come and go. */
interface AgentLookup {
  find(sessionId: string): LiveAgent | undefined
  /** Every live agent, subagents included (a stand-in may offer `find` only). */
  list?(): readonly LiveAgent[]
}

interface CheckpointState {
  stores: CheckpointStore[]
  config: CheckpointConfig
  /** Sessions this process recorded into: only they are compacted when they close. */
  written: Set<string>
  /** Told of each write a tool recorded itself, so a snapshot does not record it again. */
  snapshots?: SnapshotNotes
  /**
   * By session: the records saying a command's changes could not be recorded that the store did
   * not take either (a full disk). Written before the session's next record, or as it closes.
   */
  unrecorded: Map<string, CheckpointEntry[]>
}

/** How `rewind` tells the conversation. */
export interface RewindOptions {
  /** The caller's open session: the notice goes there, and it stays open. */
  session?: Session
  /** `false`: no event and no message (a fork continues the conversation instead). Default `true`. */
  notify?: boolean
}

/** What `plan` checks beyond the file system. */
export interface PlanOptions {
  /**
   * `true`: read back and hash each content a `restore` would write, planning one missing or
   * damaged as `skipped`, as the rewind would fail it (what a dry run shows). Default `false`: a
   * plan made just before a rewind leaves that to the rewind, which reads each content anyway.
   */
  checkContents?: boolean
}

/** `ctx.checkpoints`: one per composition; a store plugin registers where records go. */
export class CheckpointService extends Service {
  static readonly Config = CheckpointConfig

  // Methods run on cordis's tracing proxy: the state is one plain object, read once per call.
  private _state: CheckpointState

  constructor(ctx: Context, config: CheckpointConfig) {
    super(ctx, 'checkpoints')
    const state: CheckpointState = { stores: [], config, written: new Set(), unrecorded: new Map() }
    this._state = state
    // Retention runs as each session ends, while it is still open (its folder is still handed out).
    ctx.on('session/close', async (session) => {
      // Its background jobs ended before this (its beforeClose hooks): what they changed is recorded first.
      await state.snapshots?.settled(session.id)
      // The last chance this process has to say a command's changes were not recorded.
      await this.writeUnrecorded(session.id)
      const kept = state.unrecorded.get(session.id)
      if (kept) {
        const one = kept.length === 1
        ctx.logger('checkpoint').error('session %s: %s that a command\'s changes could not be recorded could not be written either: a rewind of %s will not know those changes were made (%s)',
          session.id, one ? 'the note' : `${kept.length} notes`, one ? 'its turn' : 'their turns', kept.map((entry) => entry.by).join('; '))
      }
      // A session opened only to be read (rein show, a dry run) keeps what it has.
      if (!state.written.delete(session.id) || !state.stores[0]?.compact) return
      try {
        await this.compact(session.id)
      } catch (error) {
        ctx.logger('checkpoint').warn('the checkpoints of session %s were not compacted: %s', session.id, error)
      }
    })
    ctx.inject(['tools'], (inner) => {
      inner.tools.contribute('checkpoint', (call) => {
        // The anchor comes with the identity: without one the change belongs to no turn.
        const { identity } = call
        if (identity === undefined) return undefined
        const record = (change: FileChange) => recordInConversation((sessionId, entry) => this.record(sessionId, entry), identity, change)
        return Object.freeze({ record })
      })
    })
    defineRewindEvent(ctx)
    const record = (identity: RunIdentity, change: FileChange) => recordInConversation((sessionId, entry) => this.record(sessionId, entry), identity, change)
    const noteUnrecorded = async (identity: RunIdentity, change: FileChange) => {
      try {
        await record(identity, change)
        return true
      } catch {
        // Kept under the conversation's root session, where it would have gone.
        const sessionId = identity.conversationId || identity.sessionId
        state.unrecorded.set(sessionId, [...state.unrecorded.get(sessionId) ?? [], { ...change, anchor: identity.anchor }])
        return false
      }
    }
    // Asked of the session a command's records go to (see recordInConversation).
    const ready = (identity: RunIdentity) => inConversation(identity, async (sessionId) => this.store().ready?.(sessionId))
    state.snapshots = coverExecCalls(ctx, config.home ?? reinHome(), config.snapshot, record, noteUnrecorded, ready)
  }

  /**
   * Writes the kept records saying a command's changes could not be recorded (see
   * `CheckpointState.unrecorded`), oldest first; those the store still refuses stay kept.
   */
  private async writeUnrecorded(sessionId: string): Promise<void> {
    const { unrecorded, written } = this._state
    const kept = unrecorded.get(sessionId)
    if (!kept) return
    // Taken out first: a record made meanwhile does not write them twice.
    unrecorded.delete(sessionId)
    let done = 0
    try {
      for (const entry of kept) {
        await this.store().append(sessionId, await normalized(sessionId, entry))
        written.add(sessionId)
        done++
      }
    } catch {
      unrecorded.set(sessionId, [...kept.slice(done), ...unrecorded.get(sessionId) ?? []])
    }
  }

  /** Makes `store` the one records go to, until the returned disposer runs or the caller is disposed. */
  registerStore(store: CheckpointStore): () => Promise<void> {
    const { stores } = this._state
    return this.ctx.effect(() => {
      if (stores.length > 0) throw new ReinError('DUPLICATE_CHECKPOINT_STORE', 'another checkpoint store is already registered; dispose it first')
      stores.push(store)
      return async () => {
        const index = stores.indexOf(store)
        if (index >= 0) stores.splice(index, 1)
        await store.close?.()
      }
    }, 'checkpoints.registerStore')
  }

  /**
   * Whether a tool's changes can be rewound: it records its writes (Config `tools`), or it is an
   * `exec` tool registered now, covered by a snapshot around each call (Config `snapshot`).
   */
  covers(toolName: string): boolean {
    const { config } = this._state
    if (config.tools.includes(toolName)) return true
    const info = this.ctx.get('tools')?.info(toolName)
    return info !== undefined && snapshotCovers(config.snapshot, toolName, info.effects)
  }

  /**
   * Records a change before it is made. Resolves once it is durable; when it rejects, the caller
   * must not write (`NO_CHECKPOINT_STORE`, `INVALID_CHECKPOINT`, or the store's error).
   */
  async record(sessionId: string, entry: CheckpointEntry): Promise<CheckpointRecord> {
    validate(sessionId, entry)
    // Before it, so they keep their place: ahead of the records of the turns after theirs.
    await this.writeUnrecorded(sessionId)
    const record = await this.store().append(sessionId, await normalized(sessionId, entry))
    this._state.written.add(sessionId)
    if (entry.by === undefined && !entry.folder) this._state.snapshots?.expect(entry.root, entry.path, record.after)
    return record
  }

  /** Every record of the session, in `seq` order: what `plan` reads (a store that has none gives none). */
  records(sessionId: string): Promise<readonly CheckpointRecord[]> {
    return this.store().records(sessionId)
  }

  /**
   * What `rewind(sessionId, anchor)` would do now, newest change first; changes nothing. `anchor`:
   * one turn's (its records and every record after its first), or a turn's and every later turn's,
   * in order (every record from the first any of them has: see `recordsToUndo`); the plan's
   * `anchor` is the first. `options.checkContents`: see `PlanOptions`.
   */
  async plan(sessionId: string, anchor: string | readonly string[], options: PlanOptions = {}): Promise<RewindPlan> {
    const { plan, recordsOf } = await this.planned(sessionId, anchor)
    // A file blocked by what the rewind undoes first is restored after the rest: say so here, and
    // what becomes of the folders made for files that go.
    // A file whose content the rewind could not read (when checked), or could not keep aside,
    // stays: both are known before the folders are foreseen.
    const ahead = await foreseen(plan.items)
    const readable = options.checkContents ? await unreadableSkipped(ahead, this.store(), sessionId, codedMessage) : ahead
    const aside = setAsideFolder(this._state.config.home ?? reinHome(), sessionId)
    const items = await foreseeFolders(readable.map((item) => asideChecked(item, aside)), recordsFor(recordsOf))
    return Object.freeze({ ...plan, items: Object.freeze(items) })
  }

  /** The commands of the rewound turns a kill cut off, from the session's log (none without `ctx.sessions`, or a log it cannot load). */
  private async cutOff(sessionId: string, anchors: readonly string[], undo: readonly CheckpointRecord[]): Promise<CutOffCommand[]> {
    const loaded = await this.ctx.get('sessions')?.load(sessionId).catch(() => undefined)
    if (!loaded) return []
    const tools = this.ctx.get('tools')
    const covered = (name: string) => snapshotCovers(this._state.config.snapshot, name, tools?.info(name)?.effects ?? [])
    const recordedBy = new Set(undo.flatMap((record) => (record.by === undefined ? [] : [record.by])))
    return cutOffCommands(loaded.events, new Set(anchors), covered, recordedBy)
  }

  /** The plan, and the records behind each of its files (by `fileKey`), to plan one again. */
  private async planned(sessionId: string, anchor: string | readonly string[]): Promise<{ plan: RewindPlan; recordsOf: ReadonlyMap<string, CheckpointRecord[]>; gone: ReadonlyMap<string, string> }> {
    const store = this.store()
    const anchors = typeof anchor === 'string' ? [anchor] : anchor
    const [first] = anchors
    if (first === undefined) throw new ReinError('INVALID_ANCHOR', 'plan and rewind need an anchor (the id of the user message that started the turn), or a list of at least one')
    const undo = recordsToUndo(await store.records(sessionId), new Set(anchors))
    const recordsOf = new Map<string, CheckpointRecord[]>()
    for (const record of undo) {
      const key = fileKey(record)
      const list = recordsOf.get(key)
      if (list) list.push(record)
      else recordsOf.set(key, [record])
    }
    // Files first: a folder item is planned for what stands at its path once the files the plan removes are gone.
    const groups = [...recordsOf.values()]
    const gone = goneRoots(groups)
    const files = new Map(await Promise.all(groups.filter((group) => !group[0]?.folder).map(async (group) => [group, await planGroup(group, gone)] as const)))
    const removed = new Set([...files.values()].filter((item) => item.action === 'remove').map((item) => item.file))
    const items = await Promise.all(groups.map(async (group) => files.get(group) ?? await planGroup(group, gone, removed)))
    const pruned = await store.pruned?.(sessionId)
    const cutOff = await this.cutOff(sessionId, anchors, undo)
    const plan = Object.freeze({
      sessionId, anchor: first, items: Object.freeze(items), notCovered: Object.freeze([...cutOff.map(cutOffLine), ...notCovered(undo, this._state.config.snapshot)]),
      cutOff: Object.freeze(cutOff), pruned: Object.freeze(pruned ? anchors.filter((each) => pruned.has(each)) : []),
    })
    return { plan, recordsOf, gone }
  }

  /**
   * Restores the files a turn (and every later turn) changed to their content before it, newest
   * change first; `anchor` as for `plan`. Drifted files, symbolic links and non-files are left alone and reported; one
   * failure does not stop the rest. `SESSION_BUSY` while an agent of the conversation (the session's
   * or a subagent's) runs a turn here, or the session is open in another process. When files were
   * restored, the session gets a `checkpoint/rewind` event and a message the model reads with its
   * next request (see rewind-notice.ts): through its live agent, else `options.session` (a caller
   * that holds it open), else the stored session, opened for this and closed again.
   */
  async rewind(sessionId: string, anchor: string | readonly string[], options: RewindOptions = {}): Promise<RewindResult> {
    const store = this.store()
    const agents = this.ctx.get('agents') as AgentLookup | undefined
    const running = runningIn(agents, sessionId)
    if (running !== undefined) {
      const where = running === sessionId ? '' : ` (its subagent in session ${running})`
      throw new ReinError('SESSION_BUSY', `session ${sessionId} is running a turn${where}; wait for it to end or cancel it, then rewind`, { details: { sessionId, running } })
    }
    // Found before any file is touched: a session another process holds refuses the rewind here.
    const logger = this.ctx.logger('checkpoint')
    const target = options.notify === false ? undefined : await noticeTarget(this.ctx, sessionId, agents?.find(sessionId), options.session, logger)
    try {
      const { plan, recordsOf, gone } = await this.planned(sessionId, anchor)
      const result = { sessionId, anchor: plan.anchor, restored: [] as PlanItem[], already: [] as PlanItem[], drifted: [] as PlanItem[], skipped: [] as PlanItem[], failed: [] as FailedItem[], notCovered: plan.notCovered, cutOff: plan.cutOff, pruned: plan.pruned }
      let aside: string | undefined
      const asideFolder = () => (aside ??= setAsideFolder(this._state.config.home ?? reinHome(), sessionId))
      await removeLeftoversOf(plan.items)
      const act = async (planned: PlanItem) => {
        // As the plan says: a file the rewind could not keep aside stays, skipped, rather than failing.
        const item = asideChecked(planned, asideFolder())
        if (item.action === 'already') result.already.push(item)
        else if (item.action === 'drifted') result.drifted.push(item)
        else if (item.action === 'skipped') result.skipped.push(item)
        else {
          try {
            result.restored.push(await undo(item, store, sessionId, asideFolder))
          } catch (error) {
            result.failed.push({ ...item, error: codedMessage(refusal(item, error)) })
          }
        }
      }
      const replan = (item: PlanItem) => planGroup(recordsOf.get(fileKey(item)) ?? [], gone)
      // Each file is looked at again right before it is put back: one a person changed since the plan
      // (a rewind of many files takes seconds) is drifted, their edit kept, never overwritten.
      for (const item of plan.items) if (!item.folder) await act(await replan(item))
      // Folder items are judged once the files are done: a file the turn put where a folder was is gone by now.
      const folders = await Promise.all(plan.items.filter((item) => item.folder).map(replan))
      // Before the second pass: a folder made for a file now gone may stand where a file goes back.
      const back = await settleFolders(result, [...result.restored, ...result.already], folders, recordsFor(recordsOf))
      // A turn that put a folder where a file was (or a file where a folder was) leaves that file
      // skipped until what stood in its way is undone: once more, after the rest.
      const blocked = result.skipped.filter(blockedByKind)
      if (blocked.length > 0) {
        await removeEmptyFolders(blocked)
        const firstPass = { restored: result.restored.length, already: result.already.length }
        const foundAsBefore = new Set<PlanItem>()
        for (const item of blocked) {
          const next = await replan(item)
          // A file that goes back to absent, where the folder a command removed stands again: as it was.
          // Or where what stands is what stood there before the turns (a second rewind of them finds it
          // so): the folders made for it are gone, whatever stands at their paths now.
          const asBefore = next.action === 'skipped' && await absentAsBefore(next, filesBack([...result.restored, ...result.already]))
          const settled = asBefore || (next.action === 'skipped' && next.before === null && next.reason === IS_NOW_A_DIRECTORY && back.has(next.file)) ? absentAlready(next) : next
          if (settled.action === 'skipped') continue
          result.skipped.splice(result.skipped.indexOf(item), 1)
          if (asBefore) foundAsBefore.add(settled)
          await act(settled)
        }
        // The folders made for the files found absent only now.
        const foundNow = [...result.restored.slice(firstPass.restored), ...result.already.slice(firstPass.already)].filter((item) => !foundAsBefore.has(item))
        await settleFolders(result, foundNow, [], recordsFor(recordsOf))
      }
      const done: RewindResult = Object.freeze(result)
      if (target) await tellConversation(target, done, logger)
      return done
    } finally {
      if (target) await releaseTarget(target, logger)
    }
  }

  /**
   * Applies retention to a session's checkpoints now (it also runs as each session ends): keeps the
   * newest `keepTurns` turns younger than `keepDays`, then drops the oldest while over
   * `maxSessionBytes`, never the newest. Logs what it dropped and returns the store's report.
   * `CHECKPOINT_COMPACT_UNSUPPORTED` when the store cannot compact.
   */
  async compact(sessionId: string): Promise<CompactReport> {
    const store = this.store()
    if (!store.compact) throw new ReinError('CHECKPOINT_COMPACT_UNSUPPORTED', 'the registered checkpoint store cannot compact; its records stay until it is replaced by one that can (@rein/checkpoint-jsonl)')
    const records = await store.records(sessionId)
    if (records.length === 0) return Object.freeze({ droppedRecords: 0, droppedAnchors: Object.freeze([]), droppedBlobs: 0, freedBytes: 0 })
    const retention = planRetention(records, this._state.config, Date.now(), await store.size?.(sessionId))
    const report = await store.compact(sessionId, retention.keep, { seenThrough: retention.seenThrough })
    if (report.droppedRecords > 0 || report.droppedBlobs > 0) {
      const { turns, days, size } = retention.dropped
      const anchors = report.droppedAnchors.length > 10 ? `${report.droppedAnchors.slice(0, 10).join(', ')} and ${report.droppedAnchors.length - 10} more` : report.droppedAnchors.join(', ')
      this.ctx.logger('checkpoint').info(
        'session %s: dropped the checkpoints of %d turns (%d over keepTurns, %d over keepDays, %d over maxSessionBytes)%s; %d records, %d contents, %d bytes freed; %d turns kept',
        sessionId, report.droppedAnchors.length, turns.length, days.length, size.length, anchors === '' ? '' : `: ${anchors}`,
        report.droppedRecords, report.droppedBlobs, report.freedBytes, retention.keep.size,
      )
    }
    return report
  }

  private store(): CheckpointStore {
    const [store] = this._state.stores
    if (!store) throw new ReinError('NO_CHECKPOINT_STORE', 'no checkpoint store is registered; load @rein/checkpoint-jsonl (or register one with ctx.checkpoints.registerStore)')
    return store
  }
}

/** Records (and plan items) of one file group by root and path; those of a folder a command made, apart. */
function fileKey(of: { root: string; path: string; folder?: true }): string {
  return JSON.stringify(of.folder ? [of.root, of.path, 'folder'] : [of.root, of.path])
}

/** The records behind a plan item, from the plan's grouping. */
function recordsFor(recordsOf: ReadonlyMap<string, CheckpointRecord[]>): RecordsOf {
  return (item) => recordsOf.get(fileKey(item)) ?? []
}

/** A rewind's items as they end, by outcome. */
type ByOutcome = { restored: PlanItem[]; already: PlanItem[]; drifted: PlanItem[]; skipped: PlanItem[]; failed: FailedItem[] }

/**
 * Makes again the empty folders commands removed (`folders` planned `restore`), then removes the
 * folders made for `files` (files the rewind took away, or found gone) and the folders commands made
 * (`folders` planned `remove` or `already`), never one made again; notes on each item what became
 * of them, and files each folder item where its outcome puts it (made or removed: `restored`).
 * Returns the folders standing because they were there before the turn.
 */
async function settleFolders(result: ByOutcome, files: readonly PlanItem[], folders: readonly PlanItem[], recordsOf: RecordsOf): Promise<Set<string>> {
  const settled = (item: PlanItem | FailedItem) => {
    if (isFailed(item)) result.failed.push(item)
    else if (item.action === 'remove' || item.action === 'restore') result.restored.push(item)
    else result[item.action].push(item)
  }
  // Shallowest first, as mkdir makes them (0777 less the umask); then their recorded modes, deepest first (a read-only folder above does not stop one below).
  const depth = (item: PlanItem) => item.file.split(sep).length
  const made: (PlanItem | FailedItem)[] = []
  for (const item of folders.filter((folder) => folder.existed).sort((a, b) => depth(a) - depth(b))) made.push(item.action === 'restore' ? await makeFolder(item) : item)
  const modeFailed = await setMadeModes(made)
  for (const item of made) settled(modeFailed.get(item as PlanItem) ?? item)
  const back = foldersBack([...result.restored, ...result.already])
  const going = folders.filter((folder) => !folder.existed && (folder.action === 'remove' || folder.action === 'already'))
  const done = await removeMadeFolders([...files, ...going], recordsOf, back)
  result.restored = result.restored.map((item) => done.get(item) ?? item)
  result.already = result.already.map((item) => done.get(item) ?? item)
  for (const item of folders.filter((folder) => !folder.existed)) settled(done.get(item) ?? item)
  return back
}

function isFailed(item: PlanItem | FailedItem): item is FailedItem {
  return 'error' in item
}

/**
 * One file's item from its records (newest first), or one folder's (judged as if the files in
 * `removed` were gone); a path that cannot be read, or under a root in `gone`, is skipped, saying why.
 */
async function planGroup(records: readonly CheckpointRecord[], gone: ReadonlyMap<string, string>, removed?: ReadonlySet<string>): Promise<PlanItem> {
  const [first] = records
  if (!first) throw new Error('unreachable: a group has a record')
  const rootGone = gone.get(first.root)
  if (rootGone !== undefined) return skippedGroup(records, rootGone)
  try {
    return await (first.folder ? planFolder(first.root, first.path, records, removed) : planFile(first.root, first.path, records))
  } catch (error) {
    return skippedGroup(records, `could not be read: ${codedMessage(error)}`)
  }
}

/** A group's item left alone, saying why. */
function skippedGroup(records: readonly CheckpointRecord[], reason: string): PlanItem {
  const [first] = records
  if (!first) throw new Error('unreachable: a group has a record')
  return {
    root: first.root, path: first.path, file: resolve(first.root, first.path), ...(first.folder ? { folder: true as const } : {}),
    action: 'skipped' as const, reason, before: null, after: null, seqs: records.map((record) => record.seq),
  }
}

function validate(sessionId: string, entry: CheckpointEntry): void {
  const problem = problemWith(sessionId, entry)
  if (problem) throw new ReinError('INVALID_CHECKPOINT', `checkpoint record refused: ${problem}`, { details: { sessionId, path: entry.path } })
}

/**
 * The entry with its root's real path and a plain relative path (`a/b.txt`, not `./a/b.txt` or
 * absolute), so records of one file group together whoever made them; a path outside the root is refused.
 */
async function normalized(sessionId: string, entry: CheckpointEntry): Promise<CheckpointEntry> {
  const root = await realpath(entry.root).catch(() => resolve(entry.root))
  const inside = relative(resolve(entry.root), resolve(entry.root, entry.path))
  // The root itself only as a gap: "the workspace was not snapshotted whole".
  if (inside === '' && entry.gap !== undefined) return { ...entry, root, path: '.' }
  if (inside === '' || inside === '..' || inside.startsWith(`..${sep}`) || isAbsolute(inside)) {
    throw new ReinError('INVALID_CHECKPOINT', `checkpoint record refused: ${entry.path} is not a file inside ${entry.root}`, { details: { sessionId, path: entry.path } })
  }
  const path = inside.split(sep).join('/')
  // Counted on the plain path: rewind removes that many of its folders, so they must all be below the root.
  if (entry.createdFolders !== undefined && entry.createdFolders >= path.split('/').length) {
    throw new ReinError('INVALID_CHECKPOINT', `checkpoint record refused: ${path} has fewer than ${entry.createdFolders} folders to create`, { details: { sessionId, path: entry.path } })
  }
  return { ...entry, root, path }
}

function problemWith(sessionId: string, entry: CheckpointEntry): string | undefined {
  const text = (value: unknown) => typeof value === 'string' && value !== ''
  const bytes = (value: unknown) => value === null || value instanceof Uint8Array
  if (!text(sessionId)) return 'sessionId must be a non-empty string'
  if (!text(entry.anchor) || !text(entry.root) || !text(entry.path)) return 'anchor, root and path must be non-empty strings'
  if (!bytes(entry.before) || !bytes(entry.after)) return 'before and after must be bytes (Uint8Array) or null'
  if (entry.by !== undefined && typeof entry.by !== 'string') return 'by must be a string'
  const bits = (value: unknown) => Number.isInteger(value) && typeof value === 'number' && value >= 0 && value <= 0o7777
  if (entry.mode !== undefined && !bits(entry.mode)) return 'mode must be permission bits, an integer from 0 to 0o7777'
  // The mode after a change of permissions: a rewind compares it with the file's, and gives `mode` back.
  if (entry.modeAfter !== undefined && !(bits(entry.modeAfter) && entry.mode !== undefined && !entry.folder)) return 'modeAfter must be permission bits, an integer from 0 to 0o7777, given with mode (the bits before the change), for a file'
  if (entry.createdFolders !== undefined && !(Number.isInteger(entry.createdFolders) && entry.createdFolders >= 1 && !entry.existed)) return 'createdFolders must be a count from 1, for a file the write creates'
  if (entry.folder !== undefined && entry.folder !== true) return 'folder must be true when given'
  if (entry.folder) {
    // Made (existed false), or an empty one removed (existed true, with the mode it had): never contents.
    const fits = typeof entry.existed === 'boolean' && entry.before === null && entry.after === null && entry.gap === undefined && (entry.existed || entry.mode === undefined)
    return fits ? undefined : 'a folder record has before and after null and no gap; existed false for a folder the call made, true (a mode allowed) for an empty one it removed'
  }
  if (entry.gap !== undefined) return typeof entry.gap === 'string' && entry.before === null && entry.after === null ? undefined : 'a gap is a string, with before and after null'
  return entry.existed === (entry.before !== null) ? undefined : 'existed must be true exactly when before is not null'
}

/**
 * Puts one file back: its old content, or gone when the turn created it. A file a snapshot saw
 * appear is set aside rather than deleted (it may not be the command's own). Returns the item as done.
 */
async function undo(item: PlanItem, store: CheckpointStore, sessionId: string, asideFolder: () => string): Promise<PlanItem> {
  // The content is read first, so that the last check below sits right before the change, with no
  // read from the store between them in which a folder could become a link.
  const content = item.before !== null && !item.modeOnly ? await verifiedBlob(store, sessionId, item.before) : undefined
  // Again at the last moment: a folder may have become a link since the plan looked.
  const unsafe = parentProblem(item.root, item.file)
  if (unsafe !== undefined) throw new ReinError('CHECKPOINT_UNSAFE_PATH', `${listedPath(item.path)} was left alone: ${unsafe}`, { details: { file: item.file } })
  const back = modeBackOf(item)
  if (item.modeOnly) {
    const done = back === undefined ? item : withModeDone(item, await giveModeBack(item.file, back))
    // A person's chmod since the plan: nothing of the file was given back.
    if (done.permissions?.action === 'keep') throw new Error(done.permissions.reason)
    return done
  }
  if (content !== undefined) {
    // What it holds now may be a person's edit made while a command ran: kept, not overwritten.
    const kept = item.changedWhile !== undefined ? await keepCopy(item.file, item.path, asideFolder()) : undefined
    let mode: number
    try {
      mode = await writeAtomically(item.file, content, item.mode, back)
    } catch (error) {
      // The file still holds what was copied: a copy nobody is told of would only be clutter.
      if (kept !== undefined) await discardCopy(kept)
      throw error
    }
    const done = withModeDone(item, mode)
    return kept === undefined ? done : { ...done, copiedTo: kept.path }
  }
  if (item.changedWhile !== undefined) return { ...item, movedTo: await setAside(item.file, item.path, asideFolder()) }
  await removeFile(item.file)
  return item
}

/** What an earlier rewind killed mid-write left beside the plan's files (through no link): one listing per folder. */
async function removeLeftoversOf(items: readonly PlanItem[]): Promise<void> {
  const folders = new Map<string, Set<string>>()
  for (const item of items) {
    if (item.action === 'skipped' || item.folder || parentProblem(item.root, item.file) !== undefined) continue
    const names = folders.get(dirname(item.file)) ?? new Set<string>()
    names.add(basename(item.file))
    folders.set(dirname(item.file), names)
  }
  for (const [folder, names] of folders) await removeLeftovers(folder, names)
}

