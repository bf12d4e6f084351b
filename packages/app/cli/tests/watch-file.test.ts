/**
 * The watch behind `rein chat`'s reload-on-save, on the real file system: a cordis.yml that is a
 * symlink is followed to where its target lives, also when that target is missing for a while —
 * a link made before its dotfiles are checked out, a dotfiles folder removed and made again.
 */

import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, expect, it, vi } from 'vitest'
import { watchFile } from '../src/watch-file.ts'

/** A generous bound on how long an event may take to arrive; nothing waits this long when it works. */
const EVENT = { timeout: 10_000 }
/** For a test: room for a few such waits. */
const TEST_MS = 30_000

let dir = ''
let stop: (() => void) | undefined
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rein-watch-'))
})
afterEach(() => {
  stop?.()
  stop = undefined
  rmSync(dir, { recursive: true, force: true })
})

/** Watches `file`; each call of `changed` records what the file reads then (through the link), or `missing`. */
function watched(file: string) {
  const seen: string[] = []
  const failures: Error[] = []
  const watch = watchFile(file, () => {
    try {
      seen.push(readFileSync(file, 'utf8'))
    } catch {
      seen.push('missing')
    }
  }, (error) => failures.push(error))
  stop = () => watch.close()
  return { seen, failures }
}

/** `project/cordis.yml`, a link to `home/dotfiles/cordis.yml` (as a dotfiles manager makes it). */
function linkedProject() {
  const project = join(dir, 'project')
  mkdirSync(project)
  const file = join(project, 'cordis.yml')
  const folder = join(dir, 'home', 'dotfiles')
  const target = join(folder, 'cordis.yml')
  symlinkSync(target, file)
  return { file, folder, target }
}

it('follows a link that dangles at start once its target is made, folders and all', async () => {
  const { file, folder, target } = linkedProject()
  const { seen, failures } = watched(file)
  mkdirSync(folder, { recursive: true })
  writeFileSync(target, 'one')
  await expect.poll(() => seen, EVENT).toContain('one')
  writeFileSync(target, 'two')
  await expect.poll(() => seen, EVENT).toContain('two')
  expect(failures).toEqual([])
}, TEST_MS)

// At once: ext4 gives the new folder the old one's inode.
it.each([['once the watch saw it gone', true], ['at once', false]])('follows the link again when the folder of its target is removed and made again %s', async (_when, waitForGone) => {
  const { file, folder, target } = linkedProject()
  mkdirSync(folder, { recursive: true })
  writeFileSync(target, 'one')
  const { seen, failures } = watched(file)
  writeFileSync(target, 'two')
  await expect.poll(() => seen, EVENT).toContain('two')
  rmSync(folder, { recursive: true })
  if (waitForGone) await vi.waitFor(() => { if (!seen.includes('missing')) throw new Error('the watch has not seen the folder gone yet') }, EVENT)
  mkdirSync(folder)
  writeFileSync(target, 'three')
  await expect.poll(() => seen, EVENT).toContain('three')
  writeFileSync(target, 'four')
  await expect.poll(() => seen, EVENT).toContain('four')
  expect(failures).toEqual([])
}, TEST_MS)

it('follows the link when the folder of its target is replaced by another of that name', async () => {
  const { file, folder, target } = linkedProject()
  mkdirSync(folder, { recursive: true })
  writeFileSync(target, 'one')
  const { seen, failures } = watched(file)
  // As a sync tool may: the new folder is made aside, then moved in place of the old one.
  const aside = `${folder}.new`
  mkdirSync(aside)
  writeFileSync(join(aside, 'cordis.yml'), 'two')
  rmSync(folder, { recursive: true })
  renameSync(aside, folder)
  await expect.poll(() => seen, EVENT).toContain('two')
  writeFileSync(target, 'three')
  await expect.poll(() => seen, EVENT).toContain('three')
  expect(failures).toEqual([])
}, TEST_MS)

it('still follows a plain file saved in place, and by renaming a new file over it', async () => {
  const file = join(dir, 'cordis.yml')
  writeFileSync(file, 'one')
  const { seen, failures } = watched(file)
  writeFileSync(file, 'two')
  await expect.poll(() => seen, EVENT).toContain('two')
  writeFileSync(`${file}.tmp`, 'three')
  renameSync(`${file}.tmp`, file)
  await expect.poll(() => seen, EVENT).toContain('three')
  expect(failures).toEqual([])
}, TEST_MS)
