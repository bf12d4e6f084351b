/**
 * The ground for the escape suite: a workspace full of ways out (links to outside in every shape,
 * a hard link, names another process flips), and around it a sentinel tree whose files carry a
 * marker, so a read that got outside shows in the answer and a write shows in the tree's hashes.
 * Adapted from packages/tool/tool-fs/tests/containment.test.ts (`plant`, `fingerprint`) and
 * packages/tool/tool-bash/tests/workdir.test.ts (`snapshot`).
 */
import { createHash } from 'node:crypto'
import { linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { startLinkFlipper, type LinkFlipper } from '@rein/testkit'

export interface Ground {
  /** Holds `ws` and the sentinel tree; its real path. */
  readonly base: string
  readonly ws: string
  readonly outside: string
  /** Where the tools spill long output; outside `base`, since tool-fs may read it. */
  readonly spill: string
  /** In every file of the sentinel tree: a read outside shows it. */
  readonly marker: string
  /** In the file outside that `ws/hard-out` is a hard link to. */
  readonly hardMarker: string
}

/** Makes a fresh ground under the temp folder; `remove()` deletes it. */
export function plantGround(seed: number): Ground & { remove(): void } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'rein-soak-escape-')))
  const spill = mkdtempSync(join(tmpdir(), 'rein-soak-escape-spill-'))
  const hex = createHash('sha256').update(String(seed)).digest('hex').slice(0, 12)
  const ground = { base, ws: join(base, 'ws'), outside: join(base, 'outside'), spill, marker: `SENTINEL-OUTSIDE-${hex}`, hardMarker: `HARDLINKED-${hex}` }
  const { ws, outside, marker } = ground
  // The sentinel tree: everything here is outside the workspace.
  mkdirSync(join(outside, 'nested'), { recursive: true })
  writeFileSync(join(outside, 'secret.txt'), `${marker} inside\n`)
  writeFileSync(join(outside, 'f.txt'), `${marker} inside\n`)
  writeFileSync(join(outside, 'nested', 'deep.txt'), `${marker} deep\n`)
  writeFileSync(join(outside, 'nested', 'secret.txt'), `${marker} nested\n`)
  writeFileSync(join(outside, 'hard.txt'), `${ground.hardMarker}\n`)
  mkdirSync(join(base, 'ws-other'))
  writeFileSync(join(base, 'ws-other', 'secret.txt'), `${marker}\n`)
  writeFileSync(join(base, 'top.txt'), `${marker}\n`)
  // The workspace.
  mkdirSync(join(ws, 'sub', 'deep'), { recursive: true })
  writeFileSync(join(ws, 'inside.txt'), 'inside\n')
  writeFileSync(join(ws, 'sub', 'inner.txt'), 'inside\n')
  mkdirSync(join(ws, 'flip'))
  writeFileSync(join(ws, 'flip', 'f.txt'), 'inside\n')
  writeFileSync(join(ws, 'flipfile'), 'inside\n')
  symlinkSync(join(outside, 'secret.txt'), join(ws, 'link-out-file'))
  symlinkSync('../outside', join(ws, 'link-out-dir'))
  symlinkSync('../outside/nested', join(ws, 'link-deep'))
  symlinkSync('/', join(ws, 'link-root'))
  symlinkSync('/proc/self/root', join(ws, 'link-proc'))
  symlinkSync('../..', join(ws, 'sub', 'link-up'))
  symlinkSync('/', join(ws, 'sub', 'root-link'))
  symlinkSync('../outside/not-yet.txt', join(ws, 'dangling-out'))
  symlinkSync('chain2', join(ws, 'chain1'))
  symlinkSync('link-out-file', join(ws, 'chain2'))
  symlinkSync(base, join(ws, 'link-parent'))
  symlinkSync(join(ws, 'link-out-dir'), join(ws, 'link-chain'))
  symlinkSync(join(ws, 'sub'), join(ws, 'link-in'))
  linkSync(join(outside, 'hard.txt'), join(ws, 'hard-out'))
  return {
    ...ground,
    remove: () => {
      rmSync(base, { recursive: true, force: true })
      rmSync(spill, { recursive: true, force: true })
    },
  }
}

/** Every entry outside the workspace under `base` (links not followed) with its mode and a file's hash. */
export function fingerprintOutside(ground: Ground): Record<string, string> {
  const out: Record<string, string> = {}
  const visit = (folder: string) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name)
      if (path === ground.ws) continue
      const info = lstatSync(path)
      const key = relative(ground.base, path)
      if (info.isSymbolicLink()) out[key] = `link -> ${readlinkSync(path)}`
      else if (info.isDirectory()) {
        out[key] = `dir ${(info.mode & 0o7777).toString(8)}`
        visit(path)
      } else out[key] = `file ${(info.mode & 0o7777).toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`
    }
  }
  visit(ground.base)
  return out
}

/** The keys whose entries differ between two fingerprints (added, removed or changed). */
export function changed(before: Record<string, string>, after: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)])
  return [...keys].filter((key) => before[key] !== after[key]).sort()
}

/**
 * Another process that flips `ws/flip` between a folder holding f.txt and a link to the sentinel
 * tree, and `ws/flipfile` between a file and a link to a secret, as fast as it can: a link made
 * while a call runs, between its check and its use. Stop it with `stop()`.
 */
export function startFlipper(ground: Ground): Promise<LinkFlipper> {
  return startLinkFlipper([
    { path: join(ground.ws, 'flip'), linkTo: ground.outside, real: { folder: { 'f.txt': 'inside\n' } } },
    { path: join(ground.ws, 'flipfile'), linkTo: join(ground.outside, 'secret.txt'), real: { file: 'inside\n' } },
  ])
}
