// The link flipper is a real process swapping real names: each state is seen, and stop() ends it.
import { lstatSync, readFileSync, readlinkSync, writeFileSync, type Stats } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { startLinkFlipper, tempFolders, type LinkFlipper } from '../src/index.ts'

const temp = tempFolders(afterEach, 'rein-testkit-flipper-')
const flippers: LinkFlipper[] = []
afterEach(async () => {
  await Promise.all(flippers.splice(0).map((flipper) => flipper.stop()))
})

/** Polls that may pass before every state has been seen: a bound on a hang, not a speed check. */
const MAX_POLLS = 5_000

/** The lstat of `path`, or undefined in the gap between two states. */
function lstatOrGap(path: string): Stats | undefined {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

/** What `read` returns, or undefined when the name changed under it. */
function orGap<T>(read: () => T): T | undefined {
  try {
    return read()
  } catch {
    return undefined
  }
}

describe('startLinkFlipper', () => {
  it('flips a folder and a file to links and back until stopped', { timeout: 60_000 }, async () => {
    const base = await temp.folder()
    const outside = join(base, 'outside')
    writeFileSync(join(base, 'secret.txt'), 'secret\n')
    const dir = join(base, 'flip')
    const file = join(base, 'flipfile')
    const flipper = await startLinkFlipper([
      { path: dir, linkTo: outside, real: { folder: { 'f.txt': 'inside\n' } } },
      { path: file, linkTo: join(base, 'secret.txt'), real: { file: 'inside\n' } },
    ])
    flippers.push(flipper)
    const seen = new Set<string>()
    const wanted = ['folder', 'folder holding f.txt', 'folder link', 'file', 'file link']
    for (let poll = 0; poll < MAX_POLLS && !wanted.every((state) => seen.has(state)); poll++) {
      const folder = lstatOrGap(dir)
      if (folder?.isDirectory()) {
        seen.add('folder')
        if (orGap(() => readFileSync(join(dir, 'f.txt'), 'utf8')) === 'inside\n') seen.add('folder holding f.txt')
      }
      if (folder?.isSymbolicLink() && orGap(() => readlinkSync(dir)) === outside) seen.add('folder link')
      const plain = lstatOrGap(file)
      if (plain?.isFile() && orGap(() => readFileSync(file, 'utf8')) === 'inside\n') seen.add('file')
      if (plain?.isSymbolicLink() && orGap(() => readlinkSync(file)) === join(base, 'secret.txt')) seen.add('file link')
      await sleep(1)
    }
    expect([...seen].sort()).toEqual([...wanted].sort())

    await flipper.stop()
    expect(() => process.kill(flipper.pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }))
  })
})
