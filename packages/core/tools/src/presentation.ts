/**
 * Card intents: how a UI may show a call while it runs and after it ends. Presenters build them
 * from arguments and the durable result only, so they work the same live and on a replayed log.
 */

/** What kind of work a call does, for icons and grouping. */
export type ToolCallKind = 'read' | 'edit' | 'delete' | 'move' | 'search' | 'execute' | 'fetch' | 'other'

/** A call that is pending or running. */
export type ToolCallView =
  | { card: 'generic'; title: string; kind?: ToolCallKind; detail?: string }
  | { card: 'terminal'; title: string; command: string; cwd?: string }
  | { card: 'diff'; title: string; path: string }
  | { card: 'read'; title: string; path: string; offset?: number; limit?: number }
  | { card: 'search'; title: string; query: string; path?: string }

/** One file's change in a `diff` card; `before: null` is a new file, `after: null` a deletion. */
export interface FileChange {
  path: string
  before: string | null
  after: string | null
}

/** A finished call. */
export type ToolResultView =
  | { card: 'generic'; title?: string; text?: string }
  | { card: 'terminal'; title?: string; output: string; exitCode?: number | null; signal?: string | null; truncated?: boolean; stopped?: 'cancelled' | 'timed-out' }
  | { card: 'diff'; title?: string; changes: FileChange[] }
  | { card: 'read'; title?: string; path: string; startLine: number; lines: string[]; totalLines?: number }
  | { card: 'search'; title?: string; matches: { path: string; line?: number; text?: string }[]; total: number; truncated: boolean }
