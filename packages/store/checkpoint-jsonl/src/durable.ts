/** The fsync seam the store's files go through, and a folder's fsync (a rename or a new name is durable only after it). */

import { open, type FileHandle } from 'node:fs/promises'

/** Flushes a file or folder to disk (`handle.sync()`, or a test's stand-in). */
export type Sync = (handle: FileHandle) => Promise<void>

/** Fsyncs `folder`, so names made, renamed or removed in it survive a crash. */
export async function syncFolder(folder: string, sync: Sync): Promise<void> {
  const handle = await open(folder, 'r')
  try {
    await sync(handle)
  } finally {
    await handle.close()
  }
}
