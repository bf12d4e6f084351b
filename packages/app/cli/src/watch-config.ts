/**
 * `rein chat`'s hot swap: when the cordis.yml in use is saved, the composition reloads it once no
 * turn runs (a provider row's restart would cut off the request in flight) and the user is told
 * which rows changed, or why the edit was refused — the rows then keep running as they were. An
 * edit of the rows the chat's session lives in is refused too (see session-rows.ts). The
 * file is only read.
 */

import { stat } from 'node:fs/promises'
import { basename } from 'node:path'
import type { EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import { messageOf } from '@rein/base'
import { readConfigFile, type Composition, type FileVersion, type ReloadOptions, type ReloadReport, type SlowLoad } from '@rein/compose'
import { approvalTakenByChat } from './approval.ts'
import { shownCode } from './config-code.ts'
import { slowStart, waitingFor } from './composition.ts'
import { untilIdle } from './idle.ts'
import type { PluginLogs } from './plugin-logs.ts'
import { describeTouched, sessionRows, touchedRows, type TouchedRow } from './session-rows.ts'
import { watchFile } from './watch-file.ts'

/** The chat's agent, as far as a reload waits for it and checks its route. */
export interface Busy {
  readonly status: 'idle' | 'running'
  whenIdle(): Promise<void>
  /** The route it was made with: an agent keeps it, whatever the agents row says later. */
  readonly options: { readonly provider: string; readonly model: string }
  /** Its session, to name in what to do after leaving the chat. */
  readonly session: { readonly id: string }
}

/** Saves closer together than this are one edit: editors write a file in several steps. */
const SETTLE_MS = 200

/** A watch on the composition's file. */
export interface CompositionWatch {
  /** Resolves once no reload is under way nor queued, a save made meanwhile included: a turn must not start while rows restart. */
  settled(): Promise<void>
  /** Whether a save is being applied or waits to be (past the pause that makes an editor's writes one save). */
  pending(): boolean
  /** What the reload under way waits for, as its slow notice said (`: row "h" (./h.mjs) has not finished starting — …`); empty before that notice. */
  waitsFor(): string
  /** Whether a reload was given up (it never finished): the rows it was starting can never be disposed either. */
  gaveUp(): boolean
  /** Stops watching, after a reload already under way. */
  stop(): Promise<void>
}

/**
 * Watches `composition.file` until `stop`. A save is applied once `agent` is idle; `tell` gets one
 * line (or a refusal with its problems) per edit. The reload runs in `logs.around`, so a row that
 * fails to start is said once, in the refusal, not also as a log line. A save made while the
 * composition was still loading, before this watch began, is applied as if seen. `env` sets when a
 * slow reload is told (`REIN_SLOW_START_MS`, as for the load). Once `giveUp` aborts (the user
 * leaves without it), a reload that has not finished is given up, as one that never can.
 */
export function watchComposition(composition: Composition, tell: (text: string) => void, agent: Busy, logs: PluginLogs, { env = {}, giveUp }: { env?: NodeJS.ProcessEnv; giveUp?: AbortSignal } = {}): CompositionWatch {
  const { file } = composition
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  let stopped = false
  /** Saves seen, and how many of them the last reload read: one that read the file covers every save before it. */
  let saves = 0
  let read = 0
  let applying = false
  let slow: SlowLoad | undefined
  let gaveUp = false

  const apply = async (save: number) => {
    if (stopped) return
    if (agent.status === 'running') await agent.whenIdle()
    if (stopped || save <= read) return
    read = saves
    applying = true
    try {
      tell(await applySave(composition, logs, agent, { tell, env, giveUp, onSlow: (told) => { slow = told }, onGiveUp: () => { gaveUp = true } }))
    } finally {
      applying = false
      slow = undefined
    }
  }
  const pending = () => applying || saves > read
  const saved = () => {
    if (stopped) return
    clearTimeout(timer)
    timer = setTimeout(() => {
      timer = undefined
      const save = ++saves
      if (agent.status === 'running') tell(`${basename(file)} saved; it is applied when the running turn ends`)
      // One failed apply must not stop every later save from being applied.
      running = running.then(() => apply(save)).catch((error: unknown) => tell(`${basename(file)} was not applied: ${messageOf(error)}`))
    }, SETTLE_MS)
  }
  const files = watchFile(file, saved, (error) => tell(`stopped watching ${file}: ${error.message}`))
  void savedSinceLoad(file, composition.version()).then((since) => { if (since) saved() })

  return {
    settled: async () => {
      // A save seen while waiting chains another reload: wait for that one too.
      while (!stopped && pending()) await running
    },
    pending,
    waitsFor: () => (slow ? waitingFor(slow) : ''),
    gaveUp: () => gaveUp,
    stop: async () => {
      stopped = true
      clearTimeout(timer)
      files.close()
      await running
    },
  }
}

/** Whether `file` was saved since the rows running were read from it (before the watch began). */
async function savedSinceLoad(file: string, loaded: FileVersion | undefined): Promise<boolean> {
  if (!loaded) return false
  try {
    const { ino, size, mtimeMs } = await stat(file)
    return ino !== loaded.ino || size !== loaded.size || mtimeMs !== loaded.mtimeMs
  } catch {
    // Gone: the watch says so.
    return false
  }
}

interface ApplyOptions {
  tell: (text: string) => void
  env: NodeJS.ProcessEnv
  giveUp: AbortSignal | undefined
  /** Told what a slow reload waits for, as the user is. */
  onSlow: (slow: SlowLoad) => void
  onGiveUp: () => void
}

/**
 * What a save comes to: the rows it changed, or why it was not applied (the rows then run as they
 * were). A reload still going after a while is told, with the rows it waits for; one that can never
 * finish (the process has nothing else to do: the chat was left meanwhile) is given up on.
 */
async function applySave(composition: Composition, logs: PluginLogs, agent: Busy, { tell, env, giveUp, onSlow, onGiveUp }: ApplyOptions): Promise<string> {
  const name = basename(composition.file)
  const refused = `${name} was not applied; the rows keep running as they were: `
  const touched = await sessionTouched(composition)
  if (touched.length > 0) return `${refused}this chat's session lives in ${describeTouched(touched)}; to use the edit, leave this chat (Ctrl-D) and start a new one`
  const { afterMs, after } = slowStart(env)
  let given: AbortSignal | undefined
  let report: ReloadReport
  try {
    report = await logs.around(() => untilIdle((stalled) => {
      given = stalled
      const watching: ReloadOptions = {
        stalled,
        slowAfterMs: afterMs,
        onSlow: (slow) => {
          onSlow(slow)
          tell(`${name} is still reloading after ${after}${waitingFor(slow)}; the next turn waits for it (Ctrl-C leaves the chat)`)
        },
      }
      return composition.reload(watching)
    }, giveUp))
  } catch (error) {
    // Its code as `rein run` shows it for the same file.
    if (!given?.aborted) return `${refused}${shownCode(error)}${approvalTakenByChat(composition.ctx, agent.session.id, messageOf(error))}`
    onGiveUp()
    return `${name}'s reload never finished, so the chat leaves without it: ${messageOf(error)}`
  }
  return [describe(name, report, agentRows(composition, report)), routeGone(composition, agent), agentsGone(composition)].filter(Boolean).join('; ')
}

/**
 * An edit that takes the agents row away is applied: this chat's agent needs the services it uses,
 * not the row that made it, and goes on. But the file then starts no session: said at once.
 */
function agentsGone(composition: Composition): string {
  if (composition.ctx.get('agents')) return ''
  return 'no @rein/agent row is loaded now: this chat goes on with its agent, but a new rein run or rein chat refuses this file'
}

/**
 * Which providers cannot be known before the rows start (a row names its provider in its own
 * config), so an edit that takes away the one this chat talks to is applied, and said at once:
 * the chat's agent keeps its route, and every turn would fail with NO_ADAPTER until it is back.
 */
function routeGone(composition: Composition, agent: Busy): string {
  const { provider, model } = agent.options
  const loaded = composition.ctx.get('llm')?.providers() ?? []
  if (loaded.includes(provider)) return ''
  return `but this chat talks to ${provider}/${model}, which no loaded provider serves now (loaded: ${loaded.join(', ') || 'none'}): its turns fail until that provider's row is back; to use the new route, leave this chat (Ctrl-D) and start a new one`
}

/**
 * The rows the chat's session lives in that the file as saved changes or removes. None when the
 * file does not read: the reload then refuses it, saying why.
 */
async function sessionTouched(composition: Composition): Promise<TouchedRow[]> {
  let next: EntryOptions[]
  try {
    next = await readConfigFile(composition.file)
  } catch {
    return []
  }
  return touchedRows(sessionRows(composition.ctx), next, composition.rows().map((row) => row.id))
}

/** The changed or added rows that configure agents: their options reach new agents only. */
function agentRows(composition: Composition, report: ReloadReport): string[] {
  const touched = new Set([...report.changed, ...report.added])
  return composition.rows().filter((row) => row.name === '@rein/agent' && touched.has(row.id)).map((row) => row.id)
}

/** `cordis.yml reloaded, in effect from the next turn: changed llm; added clock; removed memory`. */
function describe(name: string, report: ReloadReport, agents: readonly string[]): string {
  const parts = [
    report.changed.length > 0 ? `changed ${report.changed.join(', ')}` : '',
    report.added.length > 0 ? `added ${report.added.join(', ')}` : '',
    report.removed.length > 0 ? `removed ${report.removed.join(', ')}` : '',
  ].filter(Boolean)
  if (parts.length === 0) return `${name} saved; no row changed`
  // This chat's agent keeps the options it was made with; only sessions started later see the new ones.
  const caveat = agents.length > 0 ? ` (row ${agents.join(', ')} sets agent options: they apply to new sessions, not this chat)` : ''
  return `${name} reloaded, in effect from the next turn: ${parts.join('; ')}${caveat}`
}
