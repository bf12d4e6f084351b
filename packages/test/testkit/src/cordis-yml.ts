/**
 * `useCordisYml`: a package's test loads its plugin from a cordis.yml by name, as a user's project
 * does — written into a fresh temporary folder, loaded read-only, disposed and removed after each test.
 */

import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadComposition, type Composition } from '@rein/compose'

/** What a test gets: `write` the rows (a new folder per call), `load` them; both cleaned up after each test. */
export interface CordisYmlFixture {
  /** Writes `lines` as `cordis.yml` in a new temporary folder; returns the file's path. */
  write(lines: readonly string[]): string
  /** Loads `file`, resolving plugin names from `resolveFrom` (the package under test). */
  load(file: string): Promise<Composition>
  /** The folder of the last `write`. */
  readonly dir: string
}

export function useCordisYml(afterEach: (hook: () => Promise<void>) => void, resolveFrom: string): CordisYmlFixture {
  const compositions: Composition[] = []
  const dirs: string[] = []
  afterEach(async () => {
    for (const composition of compositions.splice(0)) await composition.dispose()
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  return {
    write(lines) {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), 'rein-yml-')))
      dirs.push(dir)
      const file = join(dir, 'cordis.yml')
      writeFileSync(file, [...lines, ''].join('\n'))
      return file
    },
    async load(file) {
      const composition = await loadComposition({ file, resolveFrom })
      compositions.push(composition)
      return composition
    },
    get dir() {
      const dir = dirs.at(-1)
      if (dir === undefined) throw new Error('write a cordis.yml first')
      return dir
    },
  }
}
