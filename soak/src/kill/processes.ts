/** A search of /proc for what a run left running, and a kill of what it found. */

import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** A live process (not a zombie) whose environment or command line holds `marker`. */
export interface Found { pid: number; command: string }

/** Every live process of this user whose environment or argv contains `marker`. */
export function processesWith(marker: string): Found[] {
  const found: Found[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    const pid = Number(name)
    try {
      const stat = readFileSync(join('/proc', name, 'stat'), 'utf8')
      // The state follows the parenthesized command name: a zombie holds nothing.
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue
      const command = readFileSync(join('/proc', name, 'cmdline'), 'utf8')
      const environ = readFileSync(join('/proc', name, 'environ'), 'utf8')
      if (command.includes(marker) || environ.includes(marker)) found.push({ pid, command: command.replaceAll('\0', ' ').trim() })
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found
}

/** SIGKILLs what `processesWith` found, so one run's leftovers never reach the next. */
export function killFound(found: readonly Found[]): void {
  for (const { pid } of found) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Already gone.
    }
  }
}
