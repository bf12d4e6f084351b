/**
 * After rows start, finds every row that is not running and says why, naming the row and the field:
 * the loader itself only logs these, and a failed row would otherwise pass unnoticed. A row waiting
 * for a service is told which row provides it, or which package to add; rows waiting for each
 * other are named as one cycle.
 */

import type { Fiber } from '@deepseek-ai/cordis'
import type { Entry } from '@deepseek-ai/cordis-plugin-loader'
import type { ConfigTree } from './config-tree.ts'
import { describeCycle, findCycles } from './cycles.ts'
import { disabledThrew } from './evaluate-config.ts'
import { rowFailureProblems } from './row-failure.ts'
import { firstLine, loadPlugin, rowLabel, type RowPlugin } from './row-plugin.ts'
import { packageFor, provides } from './services.ts'

// FiberState is a `declare const enum` in cordis's typings; isolatedModules needs the numbers.
const PENDING = 0
const LOADING = 1

interface RowState {
  entry: Entry
  plugin: RowPlugin | undefined
  disabled: boolean
  /** Still importing its module or running its apply: seen only once a load has stalled. */
  starting: boolean
  /** What is wrong with the row itself; for a waiting row, the services it waits for. */
  problems: string[]
  missing: string[]
}

/**
 * One line per problem. Safe to call while rows are still starting (a stalled load): it awaits
 * nothing a starting row holds.
 */
export async function diagnose(tree: ConfigTree): Promise<string[]> {
  // Read before any inspection imports anything: a module imported now is not stuck.
  const entries = [...tree.entries()].map((entry) => ({ entry, importing: tree.isImporting(entry.options.name) }))
  const states = await Promise.all(entries.map(({ entry, importing }) => inspect(tree, entry, importing)))
  for (const state of states) state.problems = state.problems.map((problem) => sayTakenService(problem, state, states))
  const waiting = states.filter((state) => state.missing.length > 0 && state.problems.length === 0)
  const waitsFor = (state: RowState) => waiting.filter((other) => other !== state && state.missing.some((service) => providedBy(other, service)))
  const cycles = findCycles(waiting, waitsFor)
  const cycleOf = new Map(cycles.flatMap((cycle) => cycle.map((state) => [state, cycle] as const)))
  return states.flatMap((state) => {
    const cycle = cycleOf.get(state)
    const label = rowLabel(state.entry.options)
    return [
      ...(cycle?.[0] === state ? [describeCycle(cycle.map((member) => member.entry.options.id))] : []),
      ...state.problems.map((problem) => `${label}: ${problem}`),
      ...state.missing
        .filter((service) => !cycle?.some((member) => providedBy(member, service)))
        .map((service) => `${label}: ${waitingFor(service, state, states)}`),
    ]
  })
}

/** Whether `entry`'s plugin is in its apply now (for good, once a load stalled). */
export function isApplying(entry: Entry): boolean {
  return entry.fiber?.state === LOADING
}

/** The problem of a row whose module never finished importing (a load stalled). */
export const NEVER_IMPORTED = 'never finished loading its module — a top-level await in it can never settle; fix the module, or disable the row'
const NEVER_STARTED = 'never finished starting — its apply awaits something that can never settle; fix the plugin, or disable the row'

async function inspect(tree: ConfigTree, entry: Entry, importing: boolean): Promise<RowState> {
  const state: RowState = { entry, plugin: undefined, disabled: false, starting: false, problems: [], missing: [] }
  // Its module would be awaited forever.
  if (importing) return { ...state, starting: true, problems: [NEVER_IMPORTED] }
  const loaded = await loadPlugin(tree, entry.options)
  if (loaded.ok) state.plugin = loaded.plugin
  const disabled = readDisabled(entry)
  if (disabled === true) return { ...state, disabled: true }
  if (disabled !== false) return { ...state, problems: [disabled.problem] }
  if (!entry.fiber) return { ...state, problems: [loaded.ok ? notStarted(tree, entry) : loaded.problem] }
  // Awaiting it would never end.
  if (isApplying(entry)) return { ...state, starting: true, problems: [NEVER_STARTED] }
  return { ...state, ...await fiberProblems(tree, entry, entry.fiber) }
}

async function fiberProblems(tree: ConfigTree, entry: Entry, fiber: Fiber): Promise<Pick<RowState, 'problems' | 'missing'>> {
  try {
    await fiber.await()
  } catch (error) {
    return { problems: startProblems(error), missing: [] }
  }
  // Running, but a plugin it started itself did not, for its config: the row is not whole.
  if (fiber.state !== PENDING) return { problems: tree.childConfigProblems(entry), missing: [] }
  const missing = Object.keys(fiber.inject).filter((name) => tree.ctx.root.get(name) === undefined)
  return { problems: missing.length === 0 ? ['waits for a service that is not available'] : [], missing }
}

/** The row's `disabled`, or the problem of a `!!js` one that throws (the loader's getter would throw it here). */
function readDisabled(entry: Entry): boolean | { problem: string } {
  try {
    return entry.disabled
  } catch (error) {
    return { problem: disabledThrew(entry, error) }
  }
}

/**
 * A row the loader gave no fiber: what it threw before the plugin ran. A `disabled: !!js` that
 * throws was named already (`readDisabled` evaluated it again); anything else is said as thrown.
 */
function notStarted(tree: ConfigTree, entry: Entry): string {
  const failure = tree.startFailure(entry)
  if (failure === undefined) return 'did not start, and the loader gave no reason'
  return `failed to start: ${firstLine(failure)}`
}

/** A config that failed as the row started is said by the tree's own words for it, naming the field (see `ConfigTree`). */
function startProblems(error: unknown): string[] {
  return rowFailureProblems(error) ?? describeFailure(error)
}

/** What cordis throws when a second plugin provides a service one already does (`<Counter>` is the first's plugin). */
const TAKEN = /^failed to start: service "([^"]+)" has been registered at <[^>]*>$/

/**
 * A row that failed as it provided a service another row already provides: that row named, and what
 * to do, in place of cordis's words (which name the other plugin's class, not its row).
 */
function sayTakenService(problem: string, state: RowState, states: readonly RowState[]): string {
  const service = TAKEN.exec(problem)?.[1]
  if (service === undefined) return problem
  const others = states.filter((other) => other !== state && !other.disabled)
  const holder = others.find((other) => Reflect.get(other.entry.fiber?.store ?? {}, service) !== undefined)
    ?? others.find((other) => other.problems.length === 0 && providedBy(other, service))
  // Provided by no row (the caller's own context, as rein chat's approval): cordis's words stand, for the caller to say.
  if (holder === undefined) return problem
  return `provides the service "${service}", which ${rowLabel(holder.entry.options)} provides already; keep one of the two rows (remove or disable the other)`
}

function providedBy(state: RowState, service: string): boolean {
  return provides(state.entry.options, state.plugin, service)
}

function waitingFor(service: string, waiting: RowState, states: readonly RowState[]): string {
  const providers = states.filter((state) => state !== waiting && providedBy(state, service))
  const broken = providers.find((state) => !state.disabled && (state.problems.length > 0 || state.missing.length > 0))
  if (broken) return `waits for the service "${service}" from ${rowLabel(broken.entry.options)}, which ${brokenBecause(broken)} (see its error); fix that row first`
  const disabled = providers.find((state) => state.disabled)
  if (disabled) return `waits for the service "${service}" from ${rowLabel(disabled.entry.options)}, which is disabled; enable that row`
  const [running] = providers
  if (running) return `waits for the service "${service}", which ${rowLabel(running.entry.options)} should provide but does not`
  const name = packageFor(service)
  return `waits for the service "${service}" that no row provides; ${name ? `add a row with name '${name}'` : 'add the row that provides it'}`
}

function brokenBecause(state: RowState): string {
  if (state.starting) return 'never finished starting'
  return state.problems.length > 0 ? 'failed' : 'cannot start either'
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
