/**
 * Before any row starts (at load and at every reload): imports each row's plugin, checks the row's
 * config against its Config, and tells the rows that need a service from an invalid row which row
 * that is. A plugin that cannot be imported is reported here by row, so nothing starts (a reload
 * leaves the running rows untouched) and the loader does not log the same failure again. A group
 * row's own plugin is left to the start (its members are checked).
 */

import type { EntryOptions, EntryTree } from '@deepseek-ai/cordis-plugin-loader'
import { configProblems } from './check-config.ts'
import { loadPlugin, rowLabel, type RowPlugin } from './row-plugin.ts'
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

export async function preflight(tree: EntryTree, rows: readonly EntryOptions[]): Promise<PreflightResult> {
  const checked = await Promise.all(enabledRows(rows).map(async (row): Promise<CheckedRow> => {
    const loaded = await loadPlugin(tree, row)
    if (!loaded.ok) return { row, plugin: undefined, problems: [loaded.problem], cause: loaded.cause, notBuilt: loaded.notBuilt }
    return { row, plugin: loaded.plugin, problems: configProblems(row.config, loaded.plugin.Config) }
  }))
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

/** A valid row that could not start anyway: every row providing a service it needs is invalid. */
function blockedBy({ row, plugin }: CheckedRow, checked: readonly CheckedRow[]): string[] {
  return (plugin?.inject ?? []).flatMap((service) => {
    const providers = checked.filter((other) => other.row !== row && provides(other.row, other.plugin, service))
    const [provider] = providers
    if (!provider || providers.some((other) => other.problems.length === 0)) return []
    return [`${rowLabel(row)}: needs the service "${service}" from ${rowLabel(provider.row)}, which is invalid (see its error); fix that row first`]
  })
}

/** The rows that will start, group members included (a group's own config is its rows). */
function enabledRows(rows: readonly EntryOptions[]): EntryOptions[] {
  return rows.flatMap((row) => {
    if (row.disabled === true) return []
    if (row.group) return Array.isArray(row.config) ? enabledRows(row.config) : []
    return [row]
  })
}
