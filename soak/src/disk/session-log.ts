/** Reading a session log on disk the way rein does, for the disk suite's checks. */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { SessionEvent } from '@rein/session'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { validateSessionInvariants } from '@rein/testkit'

/** The one session log under `root`: its id, or undefined when none was published. */
export function onlySession(root: string): string | undefined {
  const logs = existsSync(root) ? readdirSync(root).filter((name) => name.endsWith('.jsonl')) : []
  if (logs.length > 1) throw new Error(`expected at most one session under ${root}, found ${logs.join(', ')}`)
  return logs[0]?.slice(0, -'.jsonl'.length)
}

/** The log's bytes, or an empty buffer when it does not exist. */
export function logBytes(root: string, id: string): Buffer {
  const file = join(root, `${id}.jsonl`)
  return existsSync(file) ? readFileSync(file) : Buffer.alloc(0)
}

/** What loading a log found: its events, or why it would not load. */
export type Loaded = { ok: true; events: readonly SessionEvent[] } | { ok: false; problem: string }

/** Loads `id` under `root` with the JSONL store, as `rein show` and `rein resume` read it. */
export async function loadLog(root: string, id: string): Promise<Loaded> {
  try {
    const { events } = await new JsonlSessionStore({ root }).load(id)
    return { ok: true, events }
  } catch (error) {
    return { ok: false, problem: (error as Error).message }
  }
}

/** Problems with a finished log: it does not load, breaks an invariant, or lost one of `before`'s events. */
export async function logProblems(root: string, id: string, before: readonly SessionEvent[] = []): Promise<string[]> {
  const loaded = await loadLog(root, id)
  if (!loaded.ok) return [`does not load: ${loaded.problem}`]
  const problems = validateSessionInvariants(loaded.events).map((violation) => `invariant: ${violation}`)
  for (const event of before) {
    const now = loaded.events[event.seq]
    if (JSON.stringify(now) !== JSON.stringify(event)) problems.push(`event ${event.seq} (${event.type}) changed or went missing`)
  }
  return problems
}
