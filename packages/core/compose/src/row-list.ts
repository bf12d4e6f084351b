/**
 * The rows of a running composition as a caller sees them: what each runs with (`rows()`), and
 * which rows an edit added, removed or changed (`reload()`'s report).
 */

import { isDeepStrictEqual } from 'node:util'
import { isJsExpr, type EntryOptions, type EntryTree } from '@deepseek-ai/cordis-plugin-loader'

/** One row of a composition, group members included, in file order. */
export interface CompositionRow {
  readonly id: string
  readonly name: string
  /** The id of the group row this row sits in. */
  readonly group?: string
  readonly disabled: boolean
  /**
   * What the plugin runs with: `!!js` values evaluated, the plugin's `Config` defaults filled in.
   * A row that is not running (disabled) shows its config as written, a `!!js` value as its text.
   */
  readonly config: unknown
}

/** Ids of the rows an edit touched. A row that names another plugin or was (en|dis)abled is `changed`. */
export interface ReloadReport {
  readonly added: string[]
  readonly removed: string[]
  readonly changed: string[]
}

/** A row of a cordis.yml, group members included, with the id of the group it sits in. */
export interface FlatRow {
  row: EntryOptions
  group: string | undefined
}

/** Every row, group members too, each with the group it sits in, in file order. */
export function flattenRows(rows: readonly EntryOptions[], group?: string): FlatRow[] {
  return rows.flatMap((row) => [
    { row, group },
    ...(row.group && Array.isArray(row.config) ? flattenRows(row.config, row.id) : []),
  ])
}

export function describeRows(tree: EntryTree, rows: readonly EntryOptions[]): CompositionRow[] {
  return flattenRows(rows).map(({ row, group }) => {
    const entry = tree.store[row.id]
    const disabled = entry?.disabled ?? row.disabled === true
    // A group's config is its rows, listed on their own.
    const config: unknown = row.group ? undefined : entry?.fiber && !disabled ? entry.fiber.config : written(row.config)
    return { id: row.id, name: row.name, ...(group === undefined ? {} : { group }), disabled, config }
  })
}

/** A config as written, `!!js` expressions as `!!js <text>`. */
function written(value: unknown): unknown {
  if (isJsExpr(value)) return `!!js ${value.__jsExpr}`
  if (Array.isArray(value)) return value.map(written)
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, written(item)]))
  return value
}

export function diffRows(before: readonly EntryOptions[], after: readonly EntryOptions[]): ReloadReport {
  const old = new Map(flattenRows(before).map(({ row, group }) => [row.id, { row: own(row), group }]))
  const report: ReloadReport = { added: [], removed: [], changed: [] }
  const seen = new Set<string>()
  for (const { row, group } of flattenRows(after)) {
    seen.add(row.id)
    const previous = old.get(row.id)
    if (!previous) report.added.push(row.id)
    else if (previous.group !== group || !isDeepStrictEqual(previous.row, own(row))) report.changed.push(row.id)
  }
  for (const id of old.keys()) if (!seen.has(id)) report.removed.push(id)
  return report
}

/** A row without its members: a group changes when its own fields do, each member on its own. */
function own(row: EntryOptions): EntryOptions {
  return row.group && Array.isArray(row.config) ? { ...row, config: row.config.map((member: EntryOptions) => member.id) } : row
}
