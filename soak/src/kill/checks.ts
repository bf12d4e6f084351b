/** What the kill suite reads back once a session is finished: logs, effect files, the workspace, the sessions folder. */

import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { JsonlSessionStore } from '@rein/session-jsonl'
import type { SessionEvent, SessionHeader } from '@rein/session'

export interface Log {
  header: SessionHeader & { parentSessionId?: string }
  events: readonly SessionEvent[]
}

/** Every log in `sessions`, loaded without claiming it; `failed` names the ones that did not load, with why. */
export async function loadLogs(sessions: string): Promise<{ logs: Map<string, Log>; failed: string[] }> {
  const logs = new Map<string, Log>()
  const failed: string[] = []
  if (!existsSync(sessions)) return { logs, failed }
  const store = new JsonlSessionStore({ root: sessions })
  for (const name of readdirSync(sessions)) {
    if (!name.endsWith('.jsonl')) continue
    const id = name.slice(0, -'.jsonl'.length)
    try {
      logs.set(id, (await store.load(id)) as Log)
    } catch (error) {
      failed.push(`${id}: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  return { logs, failed }
}

/** The session `rein run` made: the one log with no parent. */
export function topLevel(logs: ReadonlyMap<string, Log>): string | undefined {
  return [...logs].find(([, log]) => log.header.parentSessionId === undefined)?.[0]
}

/** True when the log's last turn completed and no turn started after it. */
export function completed(events: readonly SessionEvent[]): boolean {
  const last = events.findLast((event) => event.type === 'turn/end' || event.type === 'turn/start')
  return last?.type === 'turn/end' && (last.data as { reason?: string }).reason === 'completed'
}

/** Background jobs the log started and never ended (a process killed while it waited for them). */
export function openJobs(events: readonly SessionEvent[]): string[] {
  const open = new Set<string>()
  for (const event of events) {
    const jobId = (event.data as { jobId?: string } | undefined)?.jobId
    if (jobId === undefined) continue
    if (event.type === 'jobs/start') open.add(jobId)
    if (event.type === 'jobs/end') open.delete(jobId)
  }
  return [...open]
}

/** The texts of the log's user messages, with how often each occurs. */
export function userMessages(events: readonly SessionEvent[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const event of events) {
    if (event.type !== 'user/message') continue
    const content = (event.data as { message: { content: { type: string; text?: string }[] } }).message.content
    const text = content.map((block) => block.text ?? `[${block.type}]`).join('')
    counts.set(text, (counts.get(text) ?? 0) + 1)
  }
  return counts
}

/** Lines of `file` (none when it does not exist). */
export function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []
}

/** Runs beyond the first of each token in an effects file: each is a non-replay-safe effect repeated. */
export function repeats(tokens: readonly string[]): { extra: number; which: string[] } {
  const counts = new Map<string, number>()
  for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1)
  const which = [...counts].filter(([, count]) => count > 1).map(([token, count]) => `${token} ×${count}`)
  return { extra: [...counts.values()].reduce((sum, count) => sum + Math.max(0, count - 1), 0), which }
}

/**
 * The replay-safe `note` calls, against their runs (`<callId> <pid> <nonce>` lines): a run after
 * the one whose result the log kept, or a second run in one process, is a re-run too many; a call
 * whose result is "outcome unknown" although it could have been run again was left unknown.
 */
export function replaySafe(runs: readonly string[], logs: Iterable<Log>): { extraRuns: number; leftUnknown: number; which: string[] } {
  const byCall = new Map<string, { pid: string; nonce: string }[]>()
  for (const line of runs) {
    const [callId, pid, nonce] = line.split(' ')
    if (!callId || !pid || !nonce) continue
    byCall.set(callId, [...(byCall.get(callId) ?? []), { pid, nonce }])
  }
  const results = new Map<string, { text: string; code?: string }[]>()
  for (const { events } of logs) {
    for (const event of events) {
      if (event.type !== 'tool/result') continue
      const data = event.data as { callId: string; content: { text?: string }[]; code?: string }
      if (!data.callId.endsWith('_note')) continue
      results.set(data.callId, [...(results.get(data.callId) ?? []), { text: data.content.map((block) => block.text ?? '').join(''), ...(data.code ? { code: data.code } : {}) }])
    }
  }
  let extraRuns = 0
  let leftUnknown = 0
  const which: string[] = []
  for (const callId of new Set([...byCall.keys(), ...results.keys()])) {
    const ran = byCall.get(callId) ?? []
    const kept = results.get(callId) ?? []
    const pids = ran.map((run) => run.pid)
    const twiceInOneProcess = pids.length - new Set(pids).size
    const keptAt = Math.max(-1, ...kept.map((result) => ran.findIndex((run) => result.text.includes(run.nonce))))
    const afterKept = keptAt >= 0 ? ran.length - 1 - keptAt : 0
    if (twiceInOneProcess + afterKept > 0) which.push(`${callId}: ran ${ran.length}× (pids ${pids.join(',')}), result kept from run ${keptAt + 1}`)
    extraRuns += twiceInOneProcess + afterKept
    if (kept.some((result) => result.code === 'TOOL_OUTCOME_UNKNOWN')) {
      leftUnknown++
      which.push(`${callId}: replay-safe, yet its result says the outcome is unknown`)
    }
  }
  return { extraRuns, leftUnknown, which }
}

/** Every file under `dir` (folders themselves not listed), by path relative to it, with its content. */
export function tree(dir: string): Record<string, string> {
  const files: Record<string, string> = {}
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isDirectory()) continue
    const file = join(entry.parentPath, entry.name)
    files[relative(dir, file)] = entry.isFile() ? readFileSync(file, 'utf8') : `[${entry.isSymbolicLink() ? 'link' : 'other'}]`
  }
  return files
}

/** Lock files and temporary files in the sessions folder: once every process ended, each one is left behind. */
export function leftInSessions(sessions: string): string[] {
  if (!existsSync(sessions)) return []
  return readdirSync(sessions).filter((name) => name.endsWith('.lock') || name.endsWith('.tmp'))
}
