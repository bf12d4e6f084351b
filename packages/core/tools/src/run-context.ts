/**
 * What a caller (the agent) tells the registry about a call's surroundings, and what the body gets
 * from it: who is calling, where, a place for unbounded output, and fields provider packages add.
 */

import type { Writable } from 'node:stream'

/**
 * Who a call runs for. A run is one `send` or `continue` of an agent; its turn's anchor is the id
 * of the user message that started the turn. A child run (a subagent) carries its root run's
 * anchor, so what it changes belongs to the turn the person sees.
 */
export interface RunIdentity {
  /** The agent's name (`main` unless its options name it). */
  readonly agent: string
  readonly sessionId: string
  /** The root session's id: the same for a conversation and all its subagents. */
  readonly conversationId: string
  readonly runId: string
  readonly turnId: string
  readonly anchor: string
  /** 0 for a top-level agent; a subagent's is its parent's + 1. */
  readonly depth: number
  readonly parentRunId?: string
  /** A child run's parent session and the tool call that started it (telemetry nests the child under it). */
  readonly parentSessionId?: string
  readonly parentCallId?: string
  /**
   * True when the parent run starts after this one: a repair continued this child for the run its
   * parent takes next (a turn, or the repair told as a run at close), so telemetry hears of the
   * child first.
   */
  readonly parentRunPending?: boolean
}

/** A file opened for a tool's unbounded output, private to the user (0600 in a 0700 folder). */
export interface SpillFile {
  readonly path: string
  /** The tool ends it; its bytes are on disk once `finish` fired. */
  readonly stream: Writable
}

/** Opens a new spill file named after the call and `label` in the session's folder. */
export type OpenSpill = (label: string) => Promise<SpillFile>

/**
 * Fields provider packages add to every tool run, by declaration merging, the way cordis's
 * `Context` is extended:
 *
 *     declare module '@rein/tools' { interface ToolRunFields { reads: ReadTracker } }
 *
 * and `ctx.tools.contribute('reads', (call) => tracker.for(call))`. Each is optional on `ToolRun`:
 * the package that provides it may not be loaded.
 */
// oxlint-disable-next-line typescript/no-empty-object-type -- empty on purpose: packages merge into it
export interface ToolRunFields {}

/** What the caller knows about a call beyond its name and arguments. Every field is optional. */
export interface ToolCallContext {
  sessionId?: string
  /** Directory relative paths resolve against. Default: the registry's `cwd`. */
  cwd?: string
  /** The folder tools may work in; it may differ from `cwd`. Default: `cwd`. */
  workspaceRoot?: string
  identity?: RunIdentity
  spill?: OpenSpill
  /** Where spills go; see `ToolRun.spillFolder`. */
  spillFolder?: string
  /** The tools this caller may see and run; a call to any other is `UNKNOWN_TOOL`. Default: all. */
  visible?: (name: string) => boolean
}
