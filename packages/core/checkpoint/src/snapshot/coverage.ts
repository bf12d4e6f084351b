/**
 * Covers `exec` tools (bash) by snapshot: an execute wrapper walks the workspace before the call
 * and again after it — for a call that started a background job, when the job ends — and records
 * what changed as the call's checkpoint changes.
 */

import { realpath } from 'node:fs/promises'
import { join, relative, resolve, sep } from 'node:path'
import type { Context, Logger } from '@deepseek-ai/cordis'
import { messageOf, ReinError, shorten } from '@rein/base'
import { codedMessage } from '../error-text.ts'
import type { DispatchOutcome, ExecuteWrapper, RunIdentity, ToolCall } from '@rein/tools'
import type { CheckpointRecord, FileChange } from '../types.ts'
import type { SnapshotConfig } from './config.ts'
import { PackStore } from './pack-store.ts'
import { Snapshotter, type Attribution } from './snapshotter.ts'
import { formatBytes } from './walk.ts'

/** A pack is closed and a new one started at this size. */
const PACK_BYTES = 64 * 1024 * 1024
/** How much of a command a label keeps. */
const LABEL_CHARS = 120

/** Makes one change durable, for the run's turn. */
type Record = (identity: RunIdentity, change: FileChange) => Promise<unknown>
/**
 * Makes durable, for the run's turn, that a command's changes could not be recorded (a `gap`
 * record of the workspace, `unrecordedGap`); when the store takes nothing now, the service keeps
 * it and writes it as soon as it can. Never rejects; resolves `true` once written, `false` while kept.
 */
type NoteUnrecorded = (identity: RunIdentity, change: FileChange) => Promise<boolean>
/** Rejects when the checkpoint store could not take the records of a command run for `identity`. */
type Ready = (identity: RunIdentity) => Promise<void>

/** How the gap of a command whose changes could not be recorded begins; the cause follows in parentheses. */
const UNRECORDED = 'what this command changed could not be recorded ('
const UNRECORDED_END = '): a rewind cannot undo it; check by hand the files it may have changed'

/** The `gap` of the record that says a command's changes could not be recorded (a failed snapshot after it), and why. */
function unrecordedGap(cause: string): string {
  return `${UNRECORDED}${cause}${UNRECORDED_END}`
}

/** The cause an `unrecordedGap` names; `undefined` for any other gap. */
function unrecordedCause(gap: string | undefined): string | undefined {
  if (gap === undefined || !gap.startsWith(UNRECORDED) || !gap.endsWith(UNRECORDED_END)) return undefined
  return gap.slice(UNRECORDED.length, -UNRECORDED_END.length)
}

/** Whether a call is snapshotted: an `exec` tool not in `skip`. */
export function snapshotCovers(config: SnapshotConfig, toolName: string, effects: readonly string[]): boolean {
  return config.enabled && effects.includes('exec') && !config.skip.includes(toolName)
}

/**
 * What a plan cannot restore because a snapshot never kept it, one line per workspace whose
 * commands it undoes: a person checks these by hand.
 */
export function notCovered(records: readonly CheckpointRecord[], config: SnapshotConfig): string[] {
  const roots = new Set(records.filter((record) => record.by !== undefined).map((record) => record.root))
  const partly = [...roots].map((root) => `commands run in ${root} are undone only for files a snapshot kept: not for files ignored by .gitignore or the ignore list (${config.ignore.join(', ')}), over ${formatBytes(config.maxFileBytes)}, with names that are not valid UTF-8, or outside ${root}; nor a folder's own permissions (a chmod of a folder)`)
  // Oldest first, as they ran; `records` come newest first.
  const unrecorded = [...records].reverse().flatMap((record) => {
    const cause = unrecordedCause(record.gap)
    return cause === undefined ? [] : [`the changes \`${record.by ?? 'a command'}\` made could not be recorded (${cause}): they are not undone; check by hand what it changed in ${record.root}`]
  })
  return [...unrecorded, ...partly]
}

/** What the service tells the snapshots about writes recorded by the tools themselves. */
export interface SnapshotNotes {
  /** tool-fs recorded its write of `path` under `root` leaving `hash`: no walk records it again. */
  expect(root: string, path: string, hash: string | null): void
  /** Resolves once the walks after the background jobs `sessionId` started are recorded (or failed). */
  settled(sessionId: string): Promise<void>
}

/** Installs the wrapper on `ctx.tools` while both are loaded; the pack store closes with it. */
export function coverExecCalls(ctx: Context, home: string, config: SnapshotConfig, record: Record, noteUnrecorded: NoteUnrecorded, ready: Ready): SnapshotNotes {
  const notes = { current: undefined as Snapshotter | undefined }
  const expect = (root: string, path: string, hash: string | null) => notes.current?.expect(root, relative(root, resolve(root, path)).split(sep).join('/'), hash)
  // The walk after each background job, by the session that started it: its close waits for them.
  const pending = new Map<string, Set<Promise<unknown>>>()
  const track = (sessionId: string, walk: Promise<unknown>) => {
    const walks = pending.get(sessionId) ?? new Set()
    pending.set(sessionId, walks.add(walk))
    void walk.finally(() => {
      walks.delete(walk)
      if (walks.size === 0 && pending.get(sessionId) === walks) pending.delete(sessionId)
    })
  }
  const settled = async (sessionId: string) => {
    const walks = pending.get(sessionId)
    if (walks) await Promise.all(walks)
  }
  if (!config.enabled) return { expect, settled }
  const folder = config.folder ?? join(home, 'snapshots')
  ctx.inject(['tools'], (inner) => {
    const logger = inner.logger('checkpoint')
    const store = new PackStore(folder, { maxBytes: config.maxStoreBytes, packBytes: PACK_BYTES }, (dropped) => {
      logger.warn('the snapshot store dropped its %d oldest packs (%d bytes) to stay under snapshot.maxStoreBytes; a change whose earlier content was in them is reported as not restored', dropped.packs, dropped.bytes)
    })
    const snapshots = new Snapshotter({
      store,
      ignore: config.ignore,
      maxFileBytes: config.maxFileBytes,
      maxFiles: config.maxFiles,
      // rein's own folders (sessions, snapshots) when they sit inside a workspace.
      exclude: new Set([folder, home]),
      record,
    })
    const state = { active: true }
    notes.current = snapshots
    inner.effect(() => () => {
      state.active = false
      if (notes.current === snapshots) notes.current = undefined
      store.close()
    }, 'checkpoints.snapshots')
    inner.tools.wrapExecute(snapshotWrapper(snapshots, config, state, logger, { track, noteUnrecorded, ready }))
  })
  return { expect, settled }
}

/** What the wrapper asks of the service around a command. */
interface WrapperHooks {
  track: (sessionId: string, walk: Promise<unknown>) => void
  noteUnrecorded: NoteUnrecorded
  ready: Ready
}

function snapshotWrapper(snapshots: Snapshotter, config: SnapshotConfig, state: { active: boolean }, logger: Logger, { track, noteUnrecorded, ready }: WrapperHooks): ExecuteWrapper {
  return async (call, next) => {
    const who = snapshotCovers(config, call.toolName, call.tool.effects) ? attribution(call) : undefined
    if (!who) return next()
    // By its real path, as records name roots: a tool-fs record and a walk of one folder must meet.
    const root = await realpath(call.workspaceRoot).catch(() => call.workspaceRoot)
    const refuse = (why: string, error: unknown, todo: string): never => {
      const message = `${call.toolName} was not run: ${why} (${codedMessage(error)})${todo}, or set snapshot.enabled: false on the @rein/checkpoint row to run commands without undo`
      // The model reads the error; a person sees only the call failed, with its code, unless told here.
      logger.error(message)
      throw new ReinError('CHECKPOINT_FAILED', message, { cause: error })
    }
    // As a write is refused when its record cannot be written: a command runs only if its changes can be recorded.
    await ready(who.identity).catch((error: unknown) => refuse('the checkpoint log cannot take records', error, ', so a rewind could not undo what it would change; mend or move the log aside'))
    await snapshots.before(root).catch((error: unknown) => refuse('the workspace snapshot before it failed', error, '; free space for the snapshot store'))
    // Running from here: a call that starts beside it credits what it finds changed to this one.
    const ended = snapshots.running(root, who)
    const after = () => {
      if (!state.active) return Promise.resolve()
      return snapshots.after(root, who).then(undefined, async (error: unknown) => {
        // What it changed is lost to rewind: the turn's records must say so, or its rewind finds nothing to undo.
        const gap = { root, path: '.', existed: true, before: null, after: null, by: who.by, gap: unrecordedGap(messageOf(error)) }
        const noted = await noteUnrecorded(who.identity, gap)
        const said = noted ? 'a rewind of this turn says so' : 'a note saying so is kept until the checkpoint store takes records again'
        logger.error('the changes %s made could not be recorded (%s); they cannot be rewound, and %s', who.by, messageOf(error), said)
      })
    }
    let outcome: DispatchOutcome
    try {
      outcome = await next()
    } catch (error) {
      // A wrapper inside failed after the command may have run: what it changed is still its change.
      await after()
      ended()
      throw error
    }
    const job = backgroundJob(outcome)
    if (job) {
      // Tracked from now: the session's close ends (kills) its jobs first, then waits for this walk
      // while the session and the store are still open, so a job that ends as rein exits is recorded.
      track(who.identity.sessionId, job.then(after).finally(ended))
      return outcome
    }
    // `after` never rejects: it logs what it could not record.
    await after()
    ended()
    return outcome
  }
}

/** The call's run and label; `undefined` for a call outside a session's turn. */
function attribution(call: ToolCall): Attribution | undefined {
  const identity = call.identity
  if (!identity) return undefined
  return { identity, by: commandLabel(call.toolName, call.args) }
}

/** How records name a command's call: `bash: npm test`, on one line, cut to a label's length. */
export function commandLabel(toolName: string, args: unknown): string {
  const given = typeof args === 'object' && args !== null ? (args as { command?: unknown }).command : undefined
  const command = typeof given === 'string' ? given : JSON.stringify(args)
  return `${toolName}: ${shorten(command.replace(/\s+/g, ' ').trim(), LABEL_CHARS)}`
}

/**
 * The end of the job a call started, when its result is a `ctx.jobs` handle (`{kind: 'background',
 * jobId}` with a `done` promise that settles when the job ends and never rejects).
 */
function backgroundJob(outcome: DispatchOutcome): Promise<unknown> | undefined {
  if (!outcome.ok || typeof outcome.value !== 'object' || outcome.value === null) return undefined
  const value = outcome.value as { kind?: unknown; done?: unknown }
  if (value.kind !== 'background' || !(value.done instanceof Promise)) return undefined
  return value.done
}
