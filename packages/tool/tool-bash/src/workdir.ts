/**
 * Where a command starts: `workdir` resolved against the call's cwd, and its real path (symlinks
 * followed) inside the workspace root. This keeps the start honest; it is not a sandbox — the
 * command itself can `cd` anywhere its user may.
 */

import { realpath, stat } from 'node:fs/promises'
import { isAbsolute, relative, resolve, sep } from 'node:path'
import { ReinError, shorten } from '@rein/base'

/**
 * The real, absolute directory to start in (the shell holds it by that path: see run-command.ts).
 * The default (no `workdir`) is the call's cwd, links resolved; as given when it cannot be resolved
 * (the start then reports why).
 */
export async function resolveWorkdir(workdir: string | undefined, run: { cwd: string; workspaceRoot: string }): Promise<string> {
  if (workdir === undefined) return realpath(run.cwd).catch(() => run.cwd)
  if (workdir.includes('\0')) throw new ReinError('INVALID_WORKDIR', 'workdir contains a NUL byte; give a directory path inside the workspace')
  if (workdir.trim() === '') throw new ReinError('INVALID_WORKDIR', 'workdir is empty; leave it out to run in the current directory')
  const root = resolve(run.workspaceRoot)
  const realRoot = await realpath(root).catch((error: unknown) => {
    throw new ReinError('WORKSPACE_NOT_FOUND', `the workspace root ${root} cannot be resolved: ${(error as Error).message}`, { cause: error })
  })
  const wanted = resolve(run.cwd, workdir)
  // Refused before any look at the disk: a path outside is never even checked for existence.
  if (!inside(root, wanted) && !inside(realRoot, wanted)) throw outside(workdir, root)
  let real: string
  try {
    real = await realpath(wanted)
  } catch (error) {
    throw notUsable(workdir, error)
  }
  if (!inside(realRoot, real)) throw outside(workdir, root, real)
  if (!(await stat(real)).isDirectory()) throw new ReinError('NOT_A_DIRECTORY', `workdir ${shown(workdir)} is not a directory; give a directory inside the workspace`)
  return real
}

/** The workdir as an error names it: quoted, and cut to 200 characters (the model may send a huge one). */
function shown(workdir: string): string {
  return JSON.stringify(shorten(workdir, 200))
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

function outside(workdir: string, root: string, real?: string): ReinError {
  const via = real === undefined ? '' : ` (it resolves to ${shorten(real, 200)})`
  return new ReinError('PATH_OUTSIDE_WORKSPACE', `workdir ${shown(workdir)} is outside the workspace ${root}${via}; give a directory inside it, or leave workdir out`)
}

function notUsable(workdir: string, error: unknown): ReinError {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOENT') return new ReinError('WORKDIR_NOT_FOUND', `workdir ${shown(workdir)} does not exist; create it first or pick an existing directory`, { cause: error })
  if (code === 'ENOTDIR') return new ReinError('NOT_A_DIRECTORY', `workdir ${shown(workdir)} is not a directory; give a directory inside the workspace`, { cause: error })
  return new ReinError('INVALID_WORKDIR', `workdir ${shown(workdir)} cannot be used (${code ?? (error as Error).message}); give a directory inside the workspace`, { cause: error })
}
