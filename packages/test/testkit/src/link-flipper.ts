/**
 * Another process that swaps names between a real folder or file and a symbolic link as fast as it
 * can: a link made while the code under test runs, between its check of a path and its use of it.
 */

import { spawn } from 'node:child_process'

/** One name that flips, and its two states. */
export interface LinkFlip {
  /** The name that flips (absolute). */
  path: string
  /** What the link points to, as `symlink` takes it (absolute, or relative to the link's folder). */
  linkTo: string
  /** The real state: a folder holding these files (name → content; `{}` for an empty one), or a file with this content. */
  real: { folder: Readonly<Record<string, string>> } | { file: string }
}

/** A running flipper. */
export interface LinkFlipper {
  /** The flipping process's id. */
  readonly pid: number
  /** SIGKILLs the process and resolves once it exited; each name is left in whichever state it was. */
  stop(): Promise<void>
}

// Runs in a child of its own (a CommonJS `node -e` script), so a synchronous loop does not block
// the test and the flips land between the syscalls of the code under test, not between its awaits.
const SCRIPT = `
  const fs = require('node:fs'); const { join } = require('node:path')
  const flips = JSON.parse(process.argv[1])
  const quiet = (action) => { try { action() } catch {} }
  const makeReal = (flip) => {
    if ('folder' in flip.real) {
      quiet(() => fs.unlinkSync(flip.path)); quiet(() => fs.mkdirSync(flip.path))
      for (const [name, content] of Object.entries(flip.real.folder)) quiet(() => fs.writeFileSync(join(flip.path, name), content))
    } else {
      quiet(() => fs.rmSync(flip.path, { force: true })); quiet(() => fs.writeFileSync(flip.path, flip.real.file))
    }
  }
  const makeLink = (flip) => {
    quiet(() => fs.rmSync(flip.path, { recursive: true, force: true })); quiet(() => fs.symlinkSync(flip.linkTo, flip.path))
  }
  // Each state held up to a millisecond, so a call meets a whole folder or link more often than a gap.
  const hold = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.random())
  // Orphaned (the test's worker died before stopping it): stop spinning.
  const parent = process.ppid
  for (let round = 0; ; round++) {
    if (round % 64 === 0 && process.ppid !== parent) process.exit(0)
    if (round === 1) fs.writeSync(1, 'flipping\\n')
    for (const flip of flips) makeReal(flip)
    hold()
    for (const flip of flips) makeLink(flip)
    hold()
  }`

/**
 * Starts a process that flips every name in `flips` to its real state, holds, flips them all to
 * links, holds, and so on until stopped (or orphaned). Resolves once it flips: a Node process takes
 * a while to boot, longer than a few calls. Rejects if it exits before that.
 */
export async function startLinkFlipper(flips: readonly LinkFlip[]): Promise<LinkFlipper> {
  const child = spawn(process.execPath, ['-e', SCRIPT, JSON.stringify(flips)], { stdio: ['ignore', 'pipe', 'ignore'] })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve())
    child.once('error', reject)
    child.once('exit', (code, signal) => reject(new Error(`the link flipper exited (${code ?? signal}) before it started`)))
  })
  return {
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGKILL')
      await exited
    },
  }
}
