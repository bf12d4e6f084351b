/**
 * After rows start, finds every row that is not running and says why, naming the row and the field:
 * the loader itself only logs these, and a failed row would otherwise pass unnoticed. A row waiting
 * for a service is told which row provides it, or which package to add.
 */

import type { Entry, EntryTree } from '@deepseek-ai/cordis-plugin-loader'
import { firstLine, loadPlugin, rowLabel, type RowPlugin } from './row-plugin.ts'
import { packageFor, provides } from './services.ts'

// FiberState is a `declare const enum` in cordis's typings; isolatedModules needs the numbers.
const PENDING = 0

interface RowState {
  entry: Entry
  plugin: RowPlugin | undefined
  /** What is wrong with the row itself; for a waiting row, the services it waits for. */
  problems: string[]
  missing: string[]
}

export async function diagnose(tree: EntryTree): Promise<string[]> {
  const states = await Promise.all([...tree.entries()].map((entry) => inspect(tree, entry)))
  const failed = new Set(states.filter((state) => state.problems.length > 0 || state.missing.length > 0).map((state) => state.entry))
  return states.flatMap((state) => [
    ...state.problems.map((problem) => `${rowLabel(state.entry.options)}: ${problem}`),
    ...state.missing.map((service) => `${rowLabel(state.entry.options)}: ${waitingFor(service, state, states, failed)}`),
  ])
}

async function inspect(tree: EntryTree, entry: Entry): Promise<RowState> {
  const loaded = await loadPlugin(tree, entry.options)
  const state: RowState = { entry, plugin: loaded.ok ? loaded.plugin : undefined, problems: [], missing: [] }
  if (entry.disabled) return state
  if (!entry.fiber) {
    state.problems.push(loaded.ok ? 'the plugin failed to start; see the log' : loaded.problem)
    return state
  }
  try {
    await entry.fiber.await()
  } catch (error) {
    state.problems.push(...describeFailure(error))
    return state
  }
  if (entry.fiber.state === PENDING) {
    state.missing = Object.keys(entry.fiber.inject).filter((name) => tree.ctx.root.get(name) === undefined)
    if (state.missing.length === 0) state.problems.push('waits for a service that is not available')
  }
  return state
}

function waitingFor(service: string, waiting: RowState, states: RowState[], failed: Set<Entry>): string {
  const providers = states.filter((state) => state !== waiting && provides(state.entry.options, state.plugin, service))
  const broken = providers.find((state) => failed.has(state.entry))
  if (broken) return `waits for the service "${service}" from ${rowLabel(broken.entry.options)}, which failed (see its error); fix that row first`
  const disabled = providers.find((state) => state.entry.disabled)
  if (disabled) return `waits for the service "${service}" from ${rowLabel(disabled.entry.options)}, which is disabled; enable that row`
  const [running] = providers
  if (running) return `waits for the service "${service}", which ${rowLabel(running.entry.options)} should provide but does not`
  const name = packageFor(service)
  return `waits for the service "${service}" that no row provides; ${name ? `add a row with name '${name}'` : 'add the row that provides it'}`
}

/** One line per problem; a config ValidationError becomes `config.<field>: <problem>` per issue. */
function describeFailure(error: unknown): string[] {
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof Error && error.name === 'ValidationError') {
    return message.split('\n').slice(1).map((line) => {
      const issue = /^\s*- (.*?)(?: \(at (.+)\))?$/.exec(line)
      if (!issue) return line.trim()
      const [, text = '', path] = issue
      if (!path) return `config: ${text}`
      return `config.${path}: ${text.replace(`$.${path} `, '')}`
    })
  }
  return [`failed to start: ${firstLine(error)}`]
}
