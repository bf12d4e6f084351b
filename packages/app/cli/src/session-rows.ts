/**
 * The rows an open session lives in, and whether an edit touches them. Restarting one closes the
 * session under the agent, which opens it again in what replaced it: another store may not have
 * it (a changed `root`), and without the row nothing can open it. So `rein chat` refuses such an
 * edit while the chat runs, as it refuses an edit that does not load.
 *
 * Found by what the rows do, not by their ids or packages: the row whose plugin provides
 * `ctx.sessions`, the row whose plugin registered the store (cordis labels the effect
 * `ctx.sessions.registerStore` makes), and every row those need — the rows providing the
 * services their plugins hold, and the group they sit in — since restarting any of these restarts
 * them. Compared as compose's reload compares rows, so what is refused is what would restart.
 */

import { isDeepStrictEqual } from 'node:util'
import type { Context, Fiber } from '@deepseek-ai/cordis'
import type { Entry, EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import { flattenRows } from '@rein/compose'

/** The label @rein/session gives the effect of `ctx.sessions.registerStore`. */
const STORE_EFFECT = 'sessions.registerStore'

/** A row the session lives in that an edit changes or removes. */
export interface TouchedRow {
  id: string
  how: 'changes' | 'removes'
}

/** The loader entries of the rows the session service and its store run in, with what they need. */
export function sessionRows(ctx: Context): Entry[] {
  const fibers = [...ctx.registry.values()].flatMap((runtime) => [...runtime.fibers])
  const queue = fibers.filter((fiber) => fiber.store?.sessions?.fiber === fiber || holdsStore(fiber))
  const seen = new Set<Fiber>()
  const rows = new Set<Entry>()
  for (const fiber of queue) {
    if (seen.has(fiber)) continue
    seen.add(fiber)
    if (fiber.entry) rows.add(fiber.entry)
    // The fiber that started this one (a group's, the row's own), and the fibers whose services it holds.
    queue.push(fiber.parent.fiber, ...Object.values(fiber.store ?? {}).map((impl) => impl.fiber))
  }
  return [...rows]
}

function holdsStore(fiber: Fiber): boolean {
  const labelled = (effects: ReturnType<Fiber['getEffects']>): boolean => effects.some((effect) => effect.label === STORE_EFFECT || labelled(effect.children))
  return labelled(fiber.getEffects())
}

/**
 * Which of `rows` the rows of an edited file (`next`) remove, or change as compose's reload would
 * see it, in `fileOrder` (the running file's row ids).
 */
export function touchedRows(rows: readonly Entry[], next: readonly EntryOptions[], fileOrder: readonly string[] = []): TouchedRow[] {
  const after = new Map(flattenRows(next).map((row) => [row.row.id, row]))
  // In the order the running file lists them: the registry lists a row again after it restarts, so
  // its own order is not a steady one. A row the file does not list (none should) goes last, by id.
  const place = (entry: Entry) => {
    const index = fileOrder.indexOf(entry.options.id)
    return index < 0 ? fileOrder.length : index
  }
  const ordered = [...rows].sort((a, b) => place(a) - place(b) || a.options.id.localeCompare(b.options.id))
  return ordered.flatMap((entry): TouchedRow[] => {
    const { id } = entry.options
    const edited = after.get(id)
    if (!edited) return [{ id, how: 'removes' }]
    const group = entry.parent.ctx.fiber.entry?.options.id
    return edited.group !== group || !isDeepStrictEqual(own(entry.options), own(edited.row)) ? [{ id, how: 'changes' }] : []
  })
}

/** `rows "sessions" and "store", which the edit removes`, each kind of change said once. */
export function describeTouched(touched: readonly TouchedRow[]): string {
  const parts = (['changes', 'removes'] as const).flatMap((how) => {
    const ids = touched.filter((row) => row.how === how).map((row) => `"${row.id}"`)
    if (ids.length === 0) return []
    const named = ids.length === 1 ? `row ${ids[0]}` : `rows ${ids.slice(0, -1).join(', ')} and ${ids.at(-1)}`
    return [`${named}, which the edit ${how}`]
  })
  return parts.join(', and ')
}

/**
 * A row without its members. A group's member list is not its own: the loader adds, removes and
 * reorders members without restarting the group, and each member the session needs is compared
 * on its own (one moved out of the group changes its group).
 */
function own(row: EntryOptions): EntryOptions {
  if (!row.group || !Array.isArray(row.config)) return row
  const { config: _members, ...fields } = row
  return fields as EntryOptions
}
