/**
 * Snapshots around `exec` calls, per workspace root: the last walk of each root is the baseline the
 * next one is compared with, so a walk reads only what changed since. A walk after a command turns
 * everything that changed while it ran into checkpoint changes attributed to it. Walks of one
 * root run one at a time.
 */

import type { RunIdentity } from '@rein/tools'
import type { FileChange } from '../types.ts'
import { contentHash } from '../hash.ts'
import { snapshotChanges, type SnapshotChange } from './diff.ts'
import type { PackStore } from './pack-store.ts'
import { WorkspaceIndex } from './walk.ts'

/** Whose changes a walk finds: the command's run (its session and turn) and label. */
export interface Attribution {
  readonly identity: RunIdentity
  /** `bash: npm test`: shown as "changed while `…` ran". */
  readonly by: string
}

/** What the snapshotter needs. */
export interface SnapshotterOptions {
  readonly store: PackStore
  readonly ignore: readonly string[]
  readonly maxFileBytes: number
  readonly maxFiles: number
  readonly exclude: ReadonlySet<string>
  /** Makes one change durable, for the run's turn. */
  readonly record: (identity: RunIdentity, change: FileChange) => Promise<unknown>
}

interface RootState {
  readonly index: WorkspaceIndex
  queue: Promise<unknown>
  /**
   * Contents recorded files were given by tools that record their own writes (tool-fs), by path,
   * since the last walk: a walk that finds exactly that change leaves it to their record.
   */
  readonly expected: Map<string, string | null>
  /** Commands running on this root (in the foreground or the background), oldest first. */
  readonly running: Attribution[]
}

/** What one walk after a command recorded. */
export interface SnapshotReport {
  readonly recorded: number
  readonly gaps: number
  readonly truncated: boolean
}

/** The per-root baselines and the walks around commands (see the module comment). */
export class Snapshotter {
  private readonly _roots = new Map<string, RootState>()

  constructor(private readonly options: SnapshotterOptions) {}

  /**
   * The walk before a command. What changed since the last walk was done by a person or by a
   * command still running here (in the background, or another call's beside this one): the newest
   * such command is credited with it, so no running command's change is taken for the baseline.
   */
  before(root: string): Promise<SnapshotReport> {
    return this.serialized(root, (state) => this.walk(root, state, state.running.at(-1)))
  }

  /** The walk after a command: what changed since the walk before it is recorded as its changes. */
  after(root: string, who: Attribution): Promise<SnapshotReport> {
    return this.serialized(root, (state) => this.walk(root, state, who))
  }

  /**
   * Notes that a tool recorded its own write of `path` (relative to `root`) leaving content `hash`
   * (`null`: deleted), so the next walk does not record the same change again for a command.
   */
  expect(root: string, path: string, hash: string | null): void {
    this._roots.get(root)?.expected.set(path, hash)
  }

  /** Marks a command as running on `root` until the returned function is called. */
  running(root: string, who: Attribution): () => void {
    const { running } = this.state(root)
    running.push(who)
    return () => {
      const index = running.indexOf(who)
      if (index >= 0) running.splice(index, 1)
    }
  }

  private async walk(root: string, state: RootState, who: Attribution | undefined): Promise<SnapshotReport> {
    // The index moves on before anything is recorded: a failed record must not make the next walk blame this change on another command.
    const walk = await state.index.update()
    const expected = new Map(state.expected)
    state.expected.clear()
    if (!who) return { recorded: 0, gaps: 0, truncated: walk.truncated }
    const changes = snapshotChanges(root, walk, this.options.store).filter((change) => !recordedAlready(change, expected))
    if (walk.truncated) {
      changes.push({ path: '.', existed: true, before: null, after: null, gap: `the workspace holds more than ${this.options.maxFiles} files (snapshot.maxFiles); files past them were not snapshotted` })
    }
    let gaps = 0
    for (const change of changes) {
      await this.options.record(who.identity, { root, by: who.by, ...change })
      if (change.gap !== undefined) gaps++
    }
    return { recorded: changes.length, gaps, truncated: walk.truncated }
  }

  private serialized<T>(root: string, task: (state: RootState) => Promise<T>): Promise<T> {
    const state = this.state(root)
    const run = state.queue.then(() => task(state))
    state.queue = run.catch(() => undefined)
    return run
  }

  private state(root: string): RootState {
    let state = this._roots.get(root)
    if (!state) {
      const { options } = this
      const index = new WorkspaceIndex(root, { ignore: options.ignore, maxFileBytes: options.maxFileBytes, maxFiles: options.maxFiles, exclude: options.exclude, store: options.store })
      state = { index, queue: Promise.resolve(), running: [], expected: new Map() }
      this._roots.set(root, state)
    }
    return state
  }
}

/** Whether a tool that records its own writes already recorded this very change. */
function recordedAlready(change: SnapshotChange, expected: ReadonlyMap<string, string | null>): boolean {
  if (!expected.has(change.path) || change.gap !== undefined || change.folder) return false
  const hash = expected.get(change.path)
  return hash === null ? change.after === null : change.after !== null && contentHash(change.after) === hash
}
