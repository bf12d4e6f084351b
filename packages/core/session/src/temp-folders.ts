/**
 * Folders for sessions whose store keeps none (the in-memory store): one 0700 temporary folder,
 * made on first use, with a subfolder per session, removed whole when its owner is done.
 */

import { createHash } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export class TempFolders {
  private root: string | undefined
  private readonly folders = new Map<string, Promise<string>>()

  /**
   * Where session `id`'s folder is (made or not): the same path for the same id until `remove()`.
   * Makes the root on the first call (one synchronous call per service), so a path can be named
   * without a file-system call per session.
   */
  path(id: string): string {
    // mkdtemp makes the root 0700 and unique; under it, names only need to differ by id.
    this.root ??= mkdtempSync(join(tmpdir(), 'rein-sessions-'))
    return join(this.root, folderName(id))
  }

  /** The folder of session `id`, made 0700 on the first call. */
  folder(id: string): Promise<string> {
    let folder = this.folders.get(id)
    if (folder === undefined) {
      folder = this.make(id)
      this.folders.set(id, folder)
      folder.catch(() => this.folders.delete(id))
    }
    return folder
  }

  /**
   * Not recursive: the root is ours (0700, made by `path`); if something removed it, this fails
   * rather than make it again under a name anyone can predict.
   */
  private async make(id: string): Promise<string> {
    const path = this.path(id)
    await mkdir(path, { mode: 0o700 })
    return path
  }

  /** Deletes every folder made so far, and what is in them; later calls start a new root. */
  async remove(): Promise<void> {
    const root = this.root
    this.root = undefined
    this.folders.clear()
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  }
}

/**
 * An id a file name holds as it is: no hash needed (rein's own ids; a new folder per session is on
 * the hot path). Lower case only: where the file system ignores case, `Abc` and `abc` would share one.
 */
const PLAIN_ID = /^[a-z0-9][a-z0-9_.-]{0,39}$/

/**
 * A session's folder name: the id itself when a file name holds it, else its readable part and a
 * digest after a `~`, which no plain name has, so two ids never share a folder.
 */
function folderName(id: string): string {
  if (PLAIN_ID.test(id)) return id
  const readable = id.replace(/[^\w.-]/g, '_').slice(0, 40)
  return `${readable}~${createHash('sha256').update(id).digest('hex').slice(0, 12)}`
}
