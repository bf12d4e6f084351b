/**
 * Folders for sessions whose store keeps none (the in-memory store): one 0700 temporary folder,
 * made on first use, with a subfolder per session, removed whole when its owner is done.
 */

import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export class TempFolders {
  private root: Promise<string> | undefined
  private readonly folders = new Map<string, Promise<string>>()

  /** The folder of session `id`: the same path for the same id until `remove()`. */
  folder(id: string): Promise<string> {
    let folder = this.folders.get(id)
    if (folder === undefined) {
      folder = this.make(id)
      this.folders.set(id, folder)
      folder.catch(() => this.folders.delete(id))
    }
    return folder
  }

  /** Deletes every folder made so far, and what is in them; later calls start a new root. */
  async remove(): Promise<void> {
    const root = this.root
    this.root = undefined
    this.folders.clear()
    const path = await root?.catch(() => undefined)
    if (path !== undefined) await rm(path, { recursive: true, force: true })
  }

  private async make(id: string): Promise<string> {
    // mkdtemp makes folders 0700. The id only names the folder for a reader; mkdtemp keeps it unique.
    this.root ??= mkdtemp(join(tmpdir(), 'rein-sessions-'))
    const root = this.root
    root.catch(() => { if (this.root === root) this.root = undefined })
    return mkdtemp(join(await root, `${id.replace(/[^\w.-]/g, '_').slice(0, 40)}-`))
  }
}
