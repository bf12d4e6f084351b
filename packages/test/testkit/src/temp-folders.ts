/** Temp folders and things to close that a test makes, cleaned up after each test. */

import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** What `tempFolders` hands a test file. */
export interface TempFolders {
  /** A fresh folder under the OS temp folder, removed after the test. */
  readonly folder: () => Promise<string>
  /** Closes `thing` after the test, before the folders go; returns it. */
  readonly closeAfter: <T extends { close(): unknown }>(thing: T) => T
}

/**
 * Folders named `<prefix>…`, and things to close, cleaned up after each test (`afterEach` is the
 * test runner's): the things are closed first, then the folders removed.
 */
export function tempFolders(afterEach: (hook: () => Promise<void>) => void, prefix: string): TempFolders {
  const roots: string[] = []
  const open: { close(): unknown }[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((thing) => thing.close()))
    await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })))
  })
  return {
    folder: async () => {
      const root = await mkdtemp(join(tmpdir(), prefix))
      roots.push(root)
      return root
    },
    closeAfter: (thing) => {
      open.push(thing)
      return thing
    },
  }
}
