/**
 * Before any row starts (at load and at every reload): imports each row's plugin, checks the row's
 * config against its Config, and tells the rows that need a service from an invalid row which row
 * that is. A plugin that cannot be imported is reported here by row, so nothing starts (a reload
 * leaves the running rows untouched) and the loader does not log the same failure again. A group
 * row's own plugin is left to the start (its members are checked).
 */

import type { EntryOptions, EntryTree } from '@deepseek-ai/cordis-plugin-loader'
import type { ConfigTree } from './config-tree.ts'
import { configProblems, containsJsExpr, schemaProblems } from './check-config.ts'
import { evaluateConfig } from './evaluate-config.ts'
import { loadPlugin, rowLabel, type RowPlugin } from './row-plugin.ts'
import { secretNameProblems } from './secret-in-names.ts'
import { provides } from './services.ts'

interface CheckedRow {
  row: EntryOptions
  plugin: RowPlugin | undefined
  problems: string[]
  /** The failed import's own error. */
  cause?: unknown
  notBuilt?: boolean
}

export interface PreflightResult {
  /** One line per problem, `row "<id>" (<plugin>): …`; empty when every row may start. */
  problems: string[]
  /** Some row's plugin is TypeScript source that must be built first. */
  notBuilt: boolean
  /** The first failed import's own error in the file (a not-built one first), for the report's cause chain (`--verbose`). */
  cause?: unknown
}

/** `running`: at a reload, the rows running now; a running row whose config changes is checked with its `!!js` values evaluated. */
export async function preflight(tree: ConfigTree, rows: readonly EntryOptions[], running: readonly EntryOptions[] = []): Promise<PreflightResult> {
  const before = new Map(enabledRows(running).map((row) => [row.id, row]))
  const checked = await Promise.all(enabledRows(rows).map(async (row): Promise<CheckedRow> => {
    const loaded = await loadPlugin(tree, row)
    if (!loaded.ok) return { row, plugin: undefined, problems: [loaded.problem], cause: loaded.cause, notBuilt: loaded.notBuilt }
    if (loaded.plugin.group) return { row, plugin: loaded.plugin, problems: ['the plugin is a group: add group: true to the row, and list its rows under config'] }
    const problems = [...secretNameProblems(row.config), ...configProblems(row.config, loaded.plugin.Config)]
    return { row, plugin: loaded.plugin, problems: problems.length > 0 ? problems : restartProblems(tree, row, before.get(row.id), loaded.plugin) }
  }))
  checked.push(...await Promise.all(enabledGroups(rows).map((row) => checkGroup(tree, row))))
  const notBuilt = checked.some((entry) => entry.notBuilt === true)
  if (checked.every(({ problems }) => problems.length === 0)) return { problems: [], notBuilt }
  const problems = checked.flatMap((entry) => entry.problems.length > 0
    ? entry.problems.map((problem) => `${rowLabel(entry.row)}: ${problem}`)
    : blockedBy(entry, checked))
  // In the file's order, not the order the imports failed in; a not-built one first, as it sets the error's code.
  const failed = checked.filter((entry) => entry.cause !== undefined)
  const cause = (failed.find((entry) => entry.notBuilt === true) ?? failed[0])?.cause
  return { problems, notBuilt, ...(cause !== undefined ? { cause } : {}) }
}

/**
 * A running row whose new config holds `!!js`: the loader restarts it with the values evaluated,
 * and a restart that fails is only logged (the row runs on with its old config). So the values are
 * evaluated here, and checked, before anything is applied.
 */
function restartProblems(tree: EntryTree, row: EntryOptions, was: EntryOptions | undefined, plugin: RowPlugin): string[] {
  if (was === undefined || !containsJsExpr(row.config) || JSON.stringify(was.config) === JSON.stringify(row.config)) return []
  const entry = tree.store[row.id]
  if (entry === undefined) return []
  const { config, problems } = evaluateConfig((expression) => entry.evaluate(expression), row.config)
  // As at the first start, what an expression gives is not looked at for shell-style variables.
  return problems.length > 0 ? problems : [...secretNameProblems(config), ...schemaProblems(config, plugin.Config)]
}

/** A valid row that could not start anyway: every row providing a service it needs is invalid. */
function blockedBy({ row, plugin }: CheckedRow, checked: readonly CheckedRow[]): string[] {
  return (plugin?.inject ?? []).flatMap((service) => {
    const providers = checked.filter((other) => other.row !== row && provides(other.row, other.plugin, service))
    const [provider] = providers
    if (!provider || providers.some((other) => other.problems.length === 0)) return []
    return [`${rowLabel(row)}: needs the service "${service}" from ${rowLabel(provider.row)}, which is invalid (see its error); fix that row first`]
  })
}

/**
 * A group row's own plugin must be a group, or the rows in its config never start and nothing
 * says so. One that cannot be imported is left to the start (see the README's Limitations).
 */
async function checkGroup(tree: ConfigTree, row: EntryOptions): Promise<CheckedRow> {
  const loaded = await loadPlugin(tree, row)
  const plugin = loaded.ok ? loaded.plugin : undefined
  const problems = plugin && !plugin.group ? ["group: true needs a group plugin as the row's name (name: 'cordis:group'), and this one is not a group"] : []
  return { row, plugin, problems }
}

/** The group rows that will start, nested ones included. */
function enabledGroups(rows: readonly EntryOptions[]): EntryOptions[] {
  return rows.flatMap((row) => (row.disabled !== true && row.group && Array.isArray(row.config) ? [row, ...enabledGroups(row.config)] : []))
}

/** The rows that will start, group members included (a group's own config is its rows). */
export function enabledRows(rows: readonly EntryOptions[]): EntryOptions[] {
  return rows.flatMap((row) => {
    if (row.disabled === true) return []
    if (row.group) return Array.isArray(row.config) ? enabledRows(row.config) : []
    return [row]
  })
}
