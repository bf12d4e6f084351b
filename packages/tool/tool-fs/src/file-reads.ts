/**
 * Read-before-write: what each session last saw of each file (size, mtime, content hash), so a
 * write or edit can refuse a file the model never read or that changed since it did.
 */

import { fsError } from './errors.ts'

/** What a session last saw of a file. */
export interface FileSnapshot {
  readonly size: number
  readonly mtimeMs: number
  /** sha256 of the content, hex. */
  readonly hash: string
}

/** The files one session has read or written, by real path. */
export class FileReads {
  private readonly seen = new Map<string, FileSnapshot>()

  /** Notes that the session now knows `path` as `snapshot` (after a read or its own write). */
  record(path: string, snapshot: FileSnapshot): void {
    this.seen.delete(path)
    this.seen.set(path, Object.freeze({ size: snapshot.size, mtimeMs: snapshot.mtimeMs, hash: snapshot.hash }))
  }

  /** What the session last saw of `path`, if it read or wrote it. */
  get(path: string): FileSnapshot | undefined {
    return this.seen.get(path)
  }

  /** Forgets `path` (e.g. after something else restored it): the next write needs a read first. */
  forget(path: string): void {
    this.seen.delete(path)
  }

  /** Every real path the session knows, oldest first. */
  paths(): string[] {
    return [...this.seen.keys()]
  }

  /**
   * Throws `FILE_NOT_READ` when the session never saw `path`, `FILE_CHANGED_SINCE_READ` when its
   * content differs from what it saw. The content decides: a file touched but unchanged passes.
   */
  check(path: string, display: string, current: FileSnapshot): void {
    const seen = this.seen.get(path)
    if (seen === undefined) {
      // Reads live in this process only: after a restart (a resumed session) every file needs a new read.
      throw fsError('FILE_NOT_READ', `${display} already exists and has not been read in this session since rein started (reads from before a restart or resume are not remembered); read it now (any part), then try again`, { path: display })
    }
    if (seen.size !== current.size || seen.hash !== current.hash) {
      throw fsError('FILE_CHANGED_SINCE_READ', `${display} changed since it was last read (by someone else, or a command); read it again, then redo the change on its current content`, { path: display })
    }
  }
}

/** Per-session `FileReads`, the least recently used session dropped past `maxSessions`. */
export class FileReadsStore {
  private readonly sessions = new Map<string, FileReads>()

  constructor(private readonly maxSessions = 256) {}

  /** The session's reads; `''` is shared by calls made outside any session. */
  for(sessionId: string): FileReads {
    let reads = this.sessions.get(sessionId)
    if (reads) this.sessions.delete(sessionId)
    else reads = new FileReads()
    this.sessions.set(sessionId, reads)
    if (this.sessions.size > this.maxSessions) {
      const oldest = this.sessions.keys().next().value
      if (oldest !== undefined) this.sessions.delete(oldest)
    }
    return reads
  }
}
