/**
 * What `list` summarized before, kept beside the logs in `.summaries.json` (0600: a title is the
 * start of a prompt). A log is read again only when its size, modification time or file changed
 * since: logs are only appended to, so any write shows in the size. Without it, listing read every
 * log whole each time (seconds for a few hundred long sessions). A file that cannot be read, or
 * that another version of @rein/session's summaries wrote, is ignored; one that cannot be written
 * is skipped: it only saves time.
 */

import { randomUUID } from 'node:crypto'
import { readFile, rename, stat, unlink, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { PRIVATE_FILE_MODE } from '@rein/base'
import type { SessionSummary } from '@rein/session'

/** The file's name in the store's root; not a session's (ids never start with a dot). */
export const SUMMARIES_FILE = '.summaries.json'

/**
 * A summary is what @rein/session's `summarize` makes of a log: another version of it may make
 * another. 2: a summary is kept only of a log whose core events have their shape (1 kept any).
 * 3: a summary names the plugin event types its log needs (`requires`); 2's lack it, so a log
 * `open` refuses without its plugin would be listed from them as resumable. 4: a message whose
 * role is not its event's (an answer not `assistant`) is refused; 3's kept a summary of such a log.
 */
const VERSION = `4:${(createRequire(import.meta.url)('@rein/session/package.json') as { version: string }).version}`

/** One state of a log, as `stat` tells it. */
export interface LogStamp {
  size: number
  mtimeMs: number
  ino: number
}

interface Entry extends LogStamp {
  /** Summarized as not running: whether it runs is looked up at each list. */
  summary: SessionSummary
}

/** The summaries of one list, read at its start and written at its end when anything changed. */
export class SummaryCache {
  private changed = false

  private constructor(private readonly file: string, private readonly entries: Map<string, Entry>) {}

  /** What the last list in `root` left; empty when there is nothing usable. */
  static async read(root: string): Promise<SummaryCache> {
    const file = join(root, SUMMARIES_FILE)
    return new SummaryCache(file, parseEntries(await readFile(file, 'utf8').catch(() => '')))
  }

  /** The summary made of the log in the state `stamp` tells, if that is the state it was made of. */
  get(id: string, stamp: LogStamp): SessionSummary | undefined {
    const entry = this.entries.get(id)
    return entry && entry.size === stamp.size && entry.mtimeMs === stamp.mtimeMs && entry.ino === stamp.ino ? entry.summary : undefined
  }

  /** `summary` was made of the log as it was at `stamp`, taken before it was read. */
  set(id: string, stamp: LogStamp, summary: SessionSummary): void {
    this.entries.set(id, { ...stamp, summary })
    this.changed = true
  }

  /** Writes the summaries of `listed` (a session no longer there is dropped), when any changed. */
  async save(listed: readonly string[]): Promise<void> {
    const keep = new Set(listed)
    for (const id of this.entries.keys()) {
      if (keep.has(id)) continue
      this.entries.delete(id)
      this.changed = true
    }
    if (!this.changed) return
    // Whole or not at all, for a list running beside this one; named so a sweep removes what a killed writer left.
    const temp = `${this.file}.${process.pid}.${randomUUID()}.tmp`
    try {
      await writeFile(temp, JSON.stringify({ version: VERSION, sessions: Object.fromEntries(this.entries) }), { mode: PRIVATE_FILE_MODE, flag: 'wx' })
      await rename(temp, this.file)
    } catch {
      await unlink(temp).catch(() => {})
    }
  }
}

/** The log's state now; undefined when it cannot be looked at (its read will say why). */
export async function stampOf(file: string): Promise<LogStamp | undefined> {
  try {
    const { size, mtimeMs, ino } = await stat(file)
    return { size, mtimeMs, ino }
  } catch {
    return undefined
  }
}

function parseEntries(text: string): Map<string, Entry> {
  const entries = new Map<string, Entry>()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return entries
  }
  if (!isRecord(parsed) || parsed.version !== VERSION || !isRecord(parsed.sessions)) return entries
  for (const [id, entry] of Object.entries(parsed.sessions)) if (isEntry(id, entry)) entries.set(id, entry)
  return entries
}

/** A hand-edited or truncated entry is ignored rather than shown: the log is read instead. */
function isEntry(id: string, value: unknown): value is Entry {
  if (!isRecord(value) || !isRecord(value.summary)) return false
  const { size, mtimeMs, ino, summary } = value
  return typeof size === 'number' && typeof mtimeMs === 'number' && typeof ino === 'number' && summary.id === id
    && typeof summary.turns === 'number' && typeof summary.status === 'string' && isRecord(summary.usage)
    && typeof summary.lastActivity === 'string' && typeof summary.createdAt === 'string' && typeof summary.depth === 'number'
    && (summary.requires === undefined || (Array.isArray(summary.requires) && summary.requires.every((type) => typeof type === 'string')))
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
