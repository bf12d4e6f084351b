/** Where rein keeps its sessions, memory and `cordis.yml`: `$REIN_HOME`, else `~/.rein`. */

import { stat } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { ReinError } from '@rein/base'

/** `$REIN_HOME` as an absolute path, else `~/.rein`. */
export function reinHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.REIN_HOME ? resolve(env.REIN_HOME) : join(homedir(), '.rein')
}

/**
 * Refuses a home that is a file (or under one) before a command starts: every command would fail
 * later with a message about a file inside it. A missing home is fine: what needs it makes it.
 */
export async function checkHome(env: NodeJS.ProcessEnv): Promise<void> {
  const home = reinHome(env)
  const where = await stat(home).then((stats) => (stats.isDirectory() ? 'a folder' : 'a file'), (error: NodeJS.ErrnoException) => (error.code === 'ENOTDIR' ? 'under a file' : 'missing'))
  if (where === 'a folder' || where === 'missing') return
  const label = env.REIN_HOME ? `REIN_HOME (${home})` : `rein's home ${home} (REIN_HOME is not set)`
  const is = where === 'a file' ? 'is a file, not a folder' : 'is under a file, not in a folder'
  throw new ReinError('USAGE', `${label} ${is}: point it at a folder (rein makes it if it is missing)`, { details: { home } })
}
