/**
 * A terminal that goes away under rein (its window closed, the ssh connection dropped): reads from
 * it and changes of its mode fail with EIO, and the SIGHUP that comes with it stops the command in
 * order (interrupts.ts).
 */

import { closeSync, openSync } from 'node:fs'
import { isatty } from 'node:tty'

/** Whether `error` is a terminal's EIO: it went away, and SIGHUP is on its way. */
export function isTerminalGone(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as NodeJS.ErrnoException).code === 'EIO'
}

/**
 * At exit, points each of stdin, stdout and stderr that was a terminal and is none now (hung up)
 * at /dev/null: Node 20 aborts at exit when it cannot put such a terminal's mode back, which would
 * turn an orderly exit (130, the session saved) into a crash. `bin.ts` only, never a test's process.
 */
export function releaseHungUpTerminal(): void {
  const terminals = [0, 1, 2].filter((fd) => isatty(fd))
  process.on('exit', () => {
    for (const fd of terminals) {
      if (isatty(fd)) continue
      try {
        closeSync(fd)
        // The lowest free descriptor: the one just closed.
        const opened = openSync('/dev/null', fd === 0 ? 'r' : 'w')
        if (opened !== fd) closeSync(opened)
      } catch {
        // Nothing more to do at exit.
      }
    }
  })
}
