/**
 * The `ctx.checkpoints` service: records file changes before covered tools make them, and rewinds
 * a session's files to their state before a turn, skipping whatever changed since.
 */

import { resolve } from 'node:path'
import { Context, Service } from '@deepseek-ai/cordis'
import { ReinError } from '@rein/base'
import type {} from '@rein/tools'
import { CheckpointConfig } from './config.ts'
import { contentHash } from './hash.ts'
import { planFile, recordsToUndo } from './plan.ts'
import { removeFile, writeAtomically } from './restore.ts'
import type {
  CheckpointEntry, CheckpointHandle, CheckpointRecord, CheckpointStore, FailedItem, FileChange, PlanItem, RewindPlan, RewindResult,
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
  find(sessionId: string): { readonly status: 'idle' | 'running' } | undefined
}

interface CheckpointState {
  stores: CheckpointStore[]
  config: CheckpointConfig
}

/** `ctx.checkpoints`: one per composition; a store plugin registers where records go. */
export class CheckpointService extends Service {
  static readonly Config = CheckpointConfig

  // Methods run on cordis's tracing proxy: the state is one plain object, read once per call.
  private _state: CheckpointState

  constructor(ctx: Context, config: CheckpointConfig) {
    super(ctx, 'checkpoints')
    const state: CheckpointState = { stores: [], config }
    this._state = state
    ctx.inject(['tools'], (inner) => {
      inner.tools.contribute('checkpoint', (call) => {
        const sessionId = call.identity?.sessionId ?? call.sessionId
        const anchor = call.identity?.anchor
        if (sessionId === undefined || anchor === undefined) return undefined
        const record = (change: FileChange) => this.record(sessionId, { ...change, anchor })
        return Object.freeze({ record })
      })
    })
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

  /** Whether a tool's writes are recorded (the configured `tools`). */
  covers(toolName: string): boolean {
    return this._state.config.tools.includes(toolName)
  }

  /**
   * Records a change before it is made. Resolves once it is durable; when it rejects, the caller
   * must not write (`NO_CHECKPOINT_STORE`, `INVALID_CHECKPOINT`, or the store's error).
   */
  async record(sessionId: string, entry: CheckpointEntry): Promise<CheckpointRecord> {
    validate(sessionId, entry)
    return this.store().append(sessionId, entry)
  }

  /** What `rewind(sessionId, anchor)` would do now, newest change first; changes nothing. */
  async plan(sessionId: string, anchor: string): Promise<RewindPlan> {
    const store = this.store()
    const undo = recordsToUndo(await store.records(sessionId), anchor)
    const files = new Map<string, CheckpointRecord[]>()
    for (const record of undo) {
      const key = JSON.stringify([record.root, record.path])
      const list = files.get(key)
      if (list) list.push(record)
      else files.set(key, [record])
    }
    const items = await Promise.all([...files.values()].map(async (records) => {
      const [first] = records
      if (!first) throw new Error('unreachable: a group has a record')
      try {
        return await planFile(first.root, first.path, records)
      } catch (error) {
        return { root: first.root, path: first.path, file: resolve(first.root, first.path), action: 'skipped' as const, reason: `could not be read: ${describe(error)}`, before: null, after: null, seqs: records.map((record) => record.seq) }
      }
    }))
    return Object.freeze({ sessionId, anchor, items: Object.freeze(items), notCovered: Object.freeze([]) })
  }

  /**
   * Restores the files a turn (and every later turn) changed to their content before it, newest
   * change first. Drifted files, symbolic links and non-files are left alone and reported; one
   * failure does not stop the rest. `SESSION_BUSY` while the session's agent runs a turn.
   */
  async rewind(sessionId: string, anchor: string): Promise<RewindResult> {
    const store = this.store()
    const agents = this.ctx.get('agents') as AgentLookup | undefined
    if (agents?.find(sessionId)?.status === 'running') {
      throw new ReinError('SESSION_BUSY', `session ${sessionId} is running a turn; wait for it to end or cancel it, then rewind`, { details: { sessionId } })
    }
    const plan = await this.plan(sessionId, anchor)
    const result = { sessionId, anchor, restored: [] as PlanItem[], already: [] as PlanItem[], drifted: [] as PlanItem[], skipped: [] as PlanItem[], failed: [] as FailedItem[], notCovered: plan.notCovered }
    for (const item of plan.items) {
      if (item.action === 'already') result.already.push(item)
      else if (item.action === 'drifted') result.drifted.push(item)
      else if (item.action === 'skipped') result.skipped.push(item)
      else {
        try {
          if (item.before === null) await removeFile(item.file)
          else await writeAtomically(item.file, await verifiedBlob(store, sessionId, item.before))
          result.restored.push(item)
        } catch (error) {
          result.failed.push({ ...item, error: describe(error) })
        }
      }
    }
    return Object.freeze(result)
  }

  private store(): CheckpointStore {
    const [store] = this._state.stores
    if (!store) throw new ReinError('NO_CHECKPOINT_STORE', 'no checkpoint store is registered; load @rein/checkpoint-jsonl (or register one with ctx.checkpoints.registerStore)')
    return store
  }
}

function validate(sessionId: string, entry: CheckpointEntry): void {
  const problem = typeof sessionId !== 'string' || sessionId === '' ? 'sessionId must be a non-empty string'
    : typeof entry.anchor !== 'string' || entry.anchor === '' ? 'anchor must be a non-empty string'
      : typeof entry.root !== 'string' || entry.root === '' ? 'root must be a non-empty string'
        : typeof entry.path !== 'string' || entry.path === '' ? 'path must be a non-empty string'
          : entry.existed !== (entry.before !== null) ? 'existed must be true exactly when before is not null'
            : (entry.before !== null && !(entry.before instanceof Uint8Array)) || (entry.after !== null && !(entry.after instanceof Uint8Array)) ? 'before and after must be bytes (Uint8Array) or null'
              : undefined
  if (problem) throw new ReinError('INVALID_CHECKPOINT', `checkpoint record refused: ${problem}`, { details: { sessionId, path: entry.path } })
}

/** The content, checked against its hash: a damaged blob fails this file, it is never written. */
async function verifiedBlob(store: CheckpointStore, sessionId: string, hash: string): Promise<Uint8Array> {
  const content = await store.blob(sessionId, hash)
  if (contentHash(content) !== hash) throw new ReinError('CHECKPOINT_BLOB_DAMAGED', `checkpoint content ${hash} does not match its hash; the file was left as it is`, { details: { hash } })
  return content
}

function describe(error: unknown): string {
  if (error instanceof ReinError) return `${error.code}: ${error.message}`
  return error instanceof Error ? error.message : String(error)
}
