/** The shapes the checkpoint service, its stores and its callers share. */

/** One file change a covered tool is about to make, as the tool knows it: contents as bytes, `null` for absent. */
export interface FileChange {
  /** The workspace root `path` was resolved against; rewind resolves it the same way. */
  readonly root: string
  /** The file, relative to `root` (an absolute path is kept as it is). */
  readonly path: string
  /** Whether the file existed before the write; `false` means the write creates it. */
  readonly existed: boolean
  /** The content before the write; `null` exactly when `existed` is false. */
  readonly before: Uint8Array | null
  /** The content the write leaves; `null` when the write deletes the file. */
  readonly after: Uint8Array | null
  /**
   * The command whose run made the change, for changes found by a snapshot around an `exec` call
   * (`bash: npm test`): anything that changed while it ran is attributed to it, so a plan marks it.
   */
  readonly by?: string
  /**
   * Set when the change was seen but its contents could not be kept (a file over the size cap):
   * `before` and `after` are then `null` and rewind reports the file as not restored, with this reason.
   */
  readonly gap?: string
  /**
   * The file's permission bits before the change (`stat.mode & 0o7777`), when it existed: a file
   * rewind must create again (deleted by the turn) gets them back. Unknown: the process's default.
   * With `folder` and `existed`: the removed folder's.
   */
  readonly mode?: number
  /**
   * With `mode`, the permission bits the change left: a change of permissions alone (a snapshot's
   * `chmod` record: `existed`, no contents, and the `gap` `its permissions changed from … to …`
   * that builds from before this field read). A rewind gives `mode` back while the file still has
   * these bits; other bits are a later change of someone else's, left as they are. Read only on
   * such a record.
   */
  readonly modeAfter?: number
  /**
   * How many of the file's parent folders the write creates (`mkdir -p`), counted up from its own
   * folder: `src/new/a.ts` with `2` made `src/new` and `src`. A rewind that removes the file
   * removes them again when nothing else is in them. Only for a file the write creates; absent: none.
   * With `folder`: how many folders above the made one were made too.
   */
  readonly createdFolders?: number
  /**
   * The change is a folder, not a file; `before` and `after` are null. `existed` false: one the call
   * made, a snapshot saw appear with nothing in it (`mkdir -p build/out`), which no created file's
   * `createdFolders` counts; a rewind removes it (and its `createdFolders`) when it is empty.
   * `existed` true: an empty folder the call removed (`rmdir old`; of an empty tree, its deepest
   * folders), with its `mode`; a rewind makes it again (and the folders above it).
   */
  readonly folder?: true
}

/** A change as a store takes it: the turn it belongs to and the change. */
export interface CheckpointEntry extends FileChange {
  /** The id of the user message that started the turn (`run.identity.anchor`). */
  readonly anchor: string
}

/** A durable record: the change with contents replaced by their sha256 (hex), `null` for absent. */
export interface CheckpointRecord {
  readonly anchor: string
  /** Increasing per session, across restarts. */
  readonly seq: number
  readonly root: string
  readonly path: string
  readonly existed: boolean
  readonly before: string | null
  readonly after: string | null
  /** When the record was made (epoch milliseconds); retention by age reads it. */
  readonly at: number
  /** See `FileChange.by`. */
  readonly by?: string
  /** See `FileChange.gap`. */
  readonly gap?: string
  /** See `FileChange.mode`. */
  readonly mode?: number
  /** See `FileChange.modeAfter`. */
  readonly modeAfter?: number
  /** See `FileChange.createdFolders`. */
  readonly createdFolders?: number
  /** See `FileChange.folder`. */
  readonly folder?: true
}

/** What a store's `compact` dropped: records, and contents no kept record names. */
export interface CompactReport {
  readonly droppedRecords: number
  readonly droppedAnchors: readonly string[]
  readonly droppedBlobs: number
  readonly freedBytes: number
}

/** What `compact` is told besides the anchors to keep. */
export interface CompactOptions {
  /**
   * The highest `seq` the caller saw when it chose `keepAnchors`: a record above it was made after
   * the choice, so it is kept whatever its anchor (a turn that began meanwhile is never dropped).
   */
  readonly seenThrough?: number
}

/** How much room a session's checkpoints take in a store. */
export interface CheckpointSize {
  /** Everything the session's checkpoints take (log and contents), in bytes. */
  readonly bytes: number
  /** The size in bytes of each stored content, by hash; retention counts what kept records name. */
  readonly contents: ReadonlyMap<string, number>
}

/**
 * Where records and contents live. `append` resolves only once the record and both contents are
 * durable; a rejected `append` left nothing a later `records` returns.
 */
export interface CheckpointStore {
  /** Stores the contents (once per hash) and the record, assigning the next `seq`. */
  append(sessionId: string, entry: CheckpointEntry): Promise<CheckpointRecord>
  /** Every record of the session, in `seq` order. */
  records(sessionId: string): Promise<readonly CheckpointRecord[]>
  /** The content with this hash; rejects when it is missing. */
  blob(sessionId: string, hash: string): Promise<Uint8Array>
  /**
   * Drops every record whose anchor is not in `keepAnchors`, then the contents no kept record
   * names. A kill at any point leaves either the old log or the new one, whole. `seq` keeps
   * counting from the highest ever given, even when every record was dropped.
   */
  compact?(sessionId: string, keepAnchors: ReadonlySet<string>, options?: CompactOptions): Promise<CompactReport>
  /** The anchors some or all of whose records a compaction dropped, over every compaction of the session. */
  pruned?(sessionId: string): Promise<ReadonlySet<string>>
  /** How much room the session's checkpoints take; the size cap of retention reads it. */
  size?(sessionId: string): Promise<CheckpointSize>
  /**
   * Rejects with what `append` would reject with before writing anything (a log that cannot be read
   * back or written): asked before a command runs, so one whose changes could not be recorded is
   * not run. Absent: every session can take records.
   */
  ready?(sessionId: string): Promise<void>
  /** Releases open files; called when the store is unregistered. */
  close?(): Promise<void>
}

/** What rewind will do to one file (or did): see `RewindPlan`. */
export type PlanAction = 'restore' | 'remove' | 'already' | 'drifted' | 'skipped'

/** One file in a plan: every record of it from the anchor on, collapsed; or a folder a command made (`folder`). */
export interface PlanItem {
  readonly root: string
  readonly path: string
  /** The absolute path rewind touches. */
  readonly file: string
  /**
   * The item is a folder a command made with nothing in it (a `folder` record), not a file: `remove`
   * when it is empty once the rest is undone (in a result: `restored`, removed), `drifted` while it
   * holds anything else, `skipped` when it is no longer a plain folder; `folders` starts with it.
   * With `existed`, an empty folder a command removed.
   */
  readonly folder?: true
  /**
   * A folder item whose folder was there before the rewound turns (a command removed it): `restore`
   * makes it again, with `mode`; `already` when a folder stands there; `skipped` when a file or
   * link does (left as it is), or a folder above it is no longer a plain folder.
   */
  readonly existed?: true
  readonly action: PlanAction
  /**
   * Why a file is drifted or skipped; for a file that goes back to absent, what happens to the
   * folders made for it (`folders`, in words; a folder an earlier item named is not named again).
   */
  readonly reason?: string
  /** The content the file goes back to (`null`: removed). */
  readonly before: string | null
  /** The content rewind expects to find (the newest record's `after`). */
  readonly after: string | null
  /** The records collapsed into this item, newest first. */
  readonly seqs: readonly number[]
  /** The newest command (`FileChange.by`) the file changed while it ran: a person may have edited it too. */
  readonly changedWhile?: string
  /** The permission bits to give the file if rewind must create it (the oldest record's `mode`). */
  readonly mode?: number
  /**
   * The file's permissions, when the undone records changed them (`modeAfter` records): what the
   * rewind does with them (in a result: did). Absent when they end as they began, or the file goes
   * back to absent.
   */
  readonly permissions?: PlanPermissions
  /**
   * The rewind gives the file its mode back (`permissions`) and leaves its content: the records
   * changed nothing else, or it holds what it held before them already. `before` and `after` are
   * then null, and mean no absent file.
   */
  readonly modeOnly?: true
  /**
   * In a result: where a removed file was moved instead of deleted. A file a snapshot saw appear
   * may have come from elsewhere (moved in, a link replaced), so rewind keeps it there.
   */
  readonly movedTo?: string
  /**
   * In a result: where a copy of what a restored file held was kept. A file that changed while a
   * command ran may hold a person's edit made meanwhile, so rewind does not overwrite the only copy.
   */
  readonly copiedTo?: string
  /**
   * The folders the undone writes made for a file that goes back to absent (`createdFolders`),
   * deepest first, those still there: in a plan, what rewind will do with each; in a result, what it did.
   */
  readonly folders?: readonly PlanFolder[]
}

/** A folder a write made for its file, and whether rewind removes it (in a result: removed it) or keeps it. */
export interface PlanFolder {
  /** Relative to the item's root, `/`-separated. */
  readonly path: string
  /** The absolute path. */
  readonly folder: string
  /** `remove`: nothing else is in it once the plan's files are gone. `keep`: see `reason`. */
  readonly action: 'remove' | 'keep'
  /** Why it stays: what it holds (a person's file), or that it is no longer a plain folder. */
  readonly reason?: string
}

/** What rewind does with the permissions of a file whose records changed them (see `PlanItem.permissions`). */
export interface PlanPermissions {
  /**
   * The mode the file has, one the undone records left: the newest one's `modeAfter`, or an earlier
   * one's once a rewind of the later turns gave theirs back; absent when a record from an older
   * build does not say it.
   */
  readonly from?: number
  /** The mode before them (the oldest one's `mode`): what the file gets back. */
  readonly to?: number
  /**
   * `restore`: the file has `from` (or the rewind creates it) and gets `to`. `already`: it has
   * `to`. `keep`: it stays as it is, `reason` says why (a person changed them since, the records
   * do not chain, an older build's record keeps no mode after, or the file itself is left).
   */
  readonly action: 'restore' | 'already' | 'keep'
  /** What a table and the item's `reason` say of them; none for `already`. */
  readonly reason?: string
}

/**
 * A command a kill cut off: its call, how records would name it (`bash: make`), and the code repair
 * gave it (`COMMAND_INTERRUPTED`, or `TOOL_OUTCOME_UNKNOWN` when none of its processes were left:
 * it may have finished); no code while the session is not repaired.
 */
export interface CutOffCommand {
  readonly callId: string
  readonly by: string
  /** What repair paired the call with (`COMMAND_INTERRUPTED`, `TOOL_OUTCOME_UNKNOWN`), or `JOB_LOST` for its job; absent when the log has none yet. */
  readonly code?: string
  /** The background job the call ran the command as, when that job is what was cut off. */
  readonly job?: string
}

/** What `plan` returns: the items, newest change first. An anchor with no records has none. */
export interface RewindPlan {
  readonly sessionId: string
  readonly anchor: string
  readonly items: readonly PlanItem[]
  /** What the records cannot restore, for a person to check by hand (set when a snapshot covered a command). */
  readonly notCovered: readonly string[]
  /**
   * The commands of the rewound turns a kill cut off, which left no records: the walk after them
   * (most likely) never ran, so what they changed is not undone. Each is also a line of `notCovered`.
   */
  readonly cutOff: readonly CutOffCommand[]
  /**
   * The anchors asked for whose records retention dropped (all or some): what those turns changed
   * is not undone, however whole the rest of the plan is. Empty with a store that cannot say.
   */
  readonly pruned: readonly string[]
}

/** A file rewind could not restore, and why. */
export interface FailedItem extends PlanItem {
  readonly error: string
}

/** What `rewind` did, by outcome. `restored` holds removed files too (their `before` is `null`). */
export interface RewindResult {
  readonly sessionId: string
  readonly anchor: string
  readonly restored: readonly PlanItem[]
  readonly already: readonly PlanItem[]
  readonly drifted: readonly PlanItem[]
  readonly skipped: readonly PlanItem[]
  readonly failed: readonly FailedItem[]
  /** See `RewindPlan.notCovered`. */
  readonly notCovered: readonly string[]
  /** See `RewindPlan.cutOff`. */
  readonly cutOff: readonly CutOffCommand[]
  /** See `RewindPlan.pruned`. */
  readonly pruned: readonly string[]
}

/** What a tool body gets as `run.checkpoint`: records a change bound to the call's session and turn. */
export interface CheckpointHandle {
  /** Durable before it resolves; a tool must not write when it rejects. */
  record(change: FileChange): Promise<CheckpointRecord>
}
