/**
 * Rows that wait for each other's services: each waits for the next, so none can start. Told
 * apart from a row waiting for one that failed, whose fix is elsewhere.
 */

/**
 * Each cycle of `next` (a node → the nodes it waits for), as the nodes in waiting order, starting
 * with the one first in `nodes`; the shortest one through that node. A node is in at most one.
 */
export function findCycles<T>(nodes: readonly T[], next: (node: T) => readonly T[]): T[][] {
  const cycles: T[][] = []
  const taken = new Set<T>()
  for (const node of nodes) {
    if (taken.has(node)) continue
    const cycle = cycleThrough(node, (from) => next(from).filter((to) => !taken.has(to)))
    if (!cycle) continue
    cycles.push(cycle)
    for (const member of cycle) taken.add(member)
  }
  return cycles
}

/** The shortest path from `start` back to itself (breadth first), without repeating `start`. */
function cycleThrough<T>(start: T, next: (node: T) => readonly T[]): T[] | undefined {
  const cameFrom = new Map<T, T>()
  const queue = [start]
  for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
    for (const to of next(node)) {
      if (to === start) return pathTo(node, start, cameFrom)
      if (cameFrom.has(to)) continue
      cameFrom.set(to, node)
      queue.push(to)
    }
  }
  return undefined
}

function pathTo<T>(node: T, start: T, cameFrom: ReadonlyMap<T, T>): T[] {
  const path = [node]
  for (let at = cameFrom.get(node); node !== start && at !== undefined; at = at === start ? undefined : cameFrom.get(at)) path.unshift(at)
  return path
}

/** `rows "a", "b" and "c" wait for each other's services (a → b → c → a): none can start; …` */
export function describeCycle(ids: readonly string[]): string {
  const names = ids.map((id) => `"${id}"`)
  const listed = `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''}`
  const path = [...ids, ids[0]].join(' → ')
  const none = ids.length === 2 ? 'neither' : 'none'
  return `rows ${listed} wait for each other's services (${path}): ${none} can start; let one of them start without the service it waits for: drop it from the row's or the plugin's inject, or have the plugin use it only when present (ctx.inject)`
}
