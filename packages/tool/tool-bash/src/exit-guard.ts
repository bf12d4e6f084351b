/**
 * The last line of defence: when rein's own process exits while commands run, SIGKILL them. The
 * commands run in their own sessions, so neither a terminal's Ctrl-C nor rein's exit reaches them
 * otherwise. One `exit` listener for the whole process, there only while something runs.
 */

import { killAllNow } from './process-stop.ts'
import type { ShellProcess } from './shell.ts'

const running = new Set<ShellProcess>()

function onExit() {
  for (const target of running) killAllNow(target)
}

/** Watches `target` until the returned function is called. */
export function track(target: ShellProcess): () => void {
  if (running.size === 0) process.on('exit', onExit)
  running.add(target)
  return () => {
    if (!running.delete(target)) return
    if (running.size === 0) process.off('exit', onExit)
  }
}
