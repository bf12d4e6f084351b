/** Who made a registration, named the way a tool author can find it: the cordis.yml row, else the plugin. */

import type { Fiber } from '@deepseek-ai/cordis'

/** A registration's owner as messages name it. */
export interface Owner {
  /** `row "fs" (@rein/tool-fs)`, `plugin "word-count"`, or `the root context` when no plugin made it. */
  label: string
  /** Started from a cordis.yml row: removing the row removes the registration. */
  row: boolean
}

/**
 * What cordis's loader sets on the fiber of a plugin it starts for a row. Read structurally: the
 * loader declares `Fiber.entry` in its own package, which this one does not depend on.
 */
interface RowFiber {
  entry?: { options?: { id?: unknown; name?: unknown } }
}

/** The nearest row above `fiber` (a plugin a row's plugin started belongs to that row), else its plugin's name. */
export function ownerOf(fiber: Fiber): Owner {
  for (let at = fiber; ; at = at.parent.fiber) {
    const options = (at as RowFiber).entry?.options
    if (typeof options?.id === 'string' && typeof options.name === 'string') return { label: `row "${options.id}" (${options.name})`, row: true }
    if (at === at.parent.fiber) break
  }
  // `Fiber.name` is the nearest named plugin's, or 'root' when none is named.
  const name = fiber.name
  return { label: name === 'root' ? 'the root context' : `plugin "${name}"`, row: false }
}
