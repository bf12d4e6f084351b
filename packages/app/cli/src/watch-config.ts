/**
 * `rein chat`'s hot swap: when the cordis.yml in use is saved, the composition reloads it once no
 * turn runs (a provider row's restart would cut off the request in flight) and the user is told
 * which rows changed, or why the edit was refused — the rows then keep running as they were. The
 * file is only read. cordis's own watcher needs a newer Node and writes the file back, so this is
 * a plain `fs.watch`.
 */

import { watch, type FSWatcher } from 'node:fs'
import { basename, dirname } from 'node:path'
import type { Composition, ReloadReport } from '@rein/compose'

/** The chat's agent, as far as a reload waits for it. */
export interface Busy {
  readonly status: 'idle' | 'running'
  whenIdle(): Promise<void>
}

/** Saves closer together than this are one edit: editors write a file in several steps. */
const SETTLE_MS = 200

/** A watch on the composition's file. */
export interface CompositionWatch {
  /** Resolves once no reload is under way: a turn must not start while rows restart. */
  settled(): Promise<void>
  /** Stops watching, after a reload already under way. */
  stop(): Promise<void>
}

/**
 * Watches `composition.file` until `stop`. A save is applied once `agent` is idle; `tell` gets one
 * line (or a refusal with its problems) per edit.
 */
export function watchComposition(composition: Composition, tell: (text: string) => void, agent: Busy): CompositionWatch {
  const { file } = composition
  const name = basename(file)
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  let stopped = false

  const reload = () => {
    timer = undefined
    running = running.then(async () => {
      if (stopped) return
      if (agent.status === 'running') {
        tell(`${name} saved; it is applied when the running turn ends`)
        await agent.whenIdle()
        if (stopped) return
      }
      try {
        const report = await composition.reload()
        tell(describe(name, report, agentRows(composition, report)))
      } catch (error) {
        tell(`${name} was not applied; the rows keep running as they were: ${error instanceof Error ? error.message : String(error)}`)
      }
    })
  }
  // The folder, not the file: an editor that saves by renaming a new file over it would leave a
  // watch on the file itself looking at the old one.
  let watcher: FSWatcher | undefined = watch(dirname(file), { persistent: false }, (_event, changed) => {
    if (stopped || (changed !== null && changed !== name)) return
    clearTimeout(timer)
    timer = setTimeout(reload, SETTLE_MS)
  })
  watcher.on('error', (error) => {
    tell(`stopped watching ${file}: ${error.message}`)
    watcher?.close()
    watcher = undefined
  })

  return {
    settled: () => running,
    stop: async () => {
      stopped = true
      clearTimeout(timer)
      watcher?.close()
      watcher = undefined
      await running
    },
  }
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
