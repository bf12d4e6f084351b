/**
 * Applies a list of rows to the tree and waits until every row has settled, then reports the rows
 * that are not running. The loader only restarts a row whose config changed; a row that names
 * another plugin (or turns into a group) under the same id is removed first, so the new one starts.
 * The tree gets copies: the loader writes into the rows it holds (`disabled: true` on a removed
 * row), and the rows given here must stay as written so a reload can put them back.
 */

import type { EntryOptions, EntryTree } from '@deepseek-ai/cordis-plugin-loader'
import type { ConfigTree } from './config-tree.ts'
import { diagnose } from './diagnose.ts'

/** The problems of the rows after applying `rows` (see `diagnose`); empty when all run. */
export async function applyRows(tree: ConfigTree, rows: EntryOptions[]): Promise<string[]> {
  const replaced = replacedIds(tree, rows)
  if (replaced.size > 0) {
    // The tree forgets a removed row at once; wait for its plugin to finish stopping before the
    // new one starts (it may provide the same service).
    const leaving = [...replaced].flatMap((id) => tree.store[id]?.fiber ?? [])
    await tree.root.update(withoutIds(rows, replaced))
    await Promise.all(leaving.map((fiber) => fiber.await().catch(() => undefined)))
  }
  await tree.root.update(withoutIds(rows, new Set()))
  await tree.await()
  return diagnose(tree)
}

function replacedIds(tree: EntryTree, rows: readonly EntryOptions[], ids = new Set<string>()): Set<string> {
  for (const row of rows) {
    const current = tree.store[row.id]?.options
    if (current && (current.name !== row.name || Boolean(current.group) !== Boolean(row.group))) ids.add(row.id)
    if (row.group && Array.isArray(row.config)) replacedIds(tree, row.config, ids)
  }
  return ids
}

/** Copies of the rows (group members too), less those with the given ids. */
function withoutIds(rows: readonly EntryOptions[], ids: ReadonlySet<string>): EntryOptions[] {
  return rows.filter((row) => !ids.has(row.id)).map((row) => {
    if (!row.group || !Array.isArray(row.config)) return { ...row }
    return { ...row, config: withoutIds(row.config, ids) }
  })
}
