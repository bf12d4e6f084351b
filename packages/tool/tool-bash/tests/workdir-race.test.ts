// A `workdir` that is a folder when it is checked and a link out by the time the shell starts: the
// command must never start outside. Another process flips the name as fast as it can; each call
// either runs inside or is refused, whichever moment it meets.
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bootBash, text } from './helpers.ts'

let base: string
let ws: string
let outside: string
const stops: (() => void)[] = []

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'rein-workdir-race-')))
  ws = join(base, 'ws')
  outside = join(base, 'outside')
  mkdirSync(join(ws, 'flip'), { recursive: true })
  mkdirSync(outside)
  writeFileSync(join(outside, 'secret.txt'), 'secret')
})
afterEach(() => {
  for (const stop of stops.splice(0)) stop()
})
afterAll(() => rmSync(base, { recursive: true, force: true }))

/** Flips `ws/flip` between a folder and a link to `outside` until stopped; resolves once it flips. */
async function startFlipper(): Promise<void> {
  const script = `
    const fs = require('node:fs')
    const [dir, outside] = process.argv.slice(1)
    const quiet = (action) => { try { action() } catch {} }
    // Each state held up to a millisecond, so a call meets a whole folder or link more often than a gap.
    const hold = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.random())
    // Orphaned (the test's worker died before stopping it): stop spinning.
    const parent = process.ppid
    for (let round = 0; ; round++) {
      if (round % 64 === 0 && process.ppid !== parent) process.exit(0)
      if (round === 1) fs.writeSync(1, 'flipping\\n')
      quiet(() => fs.unlinkSync(dir)); quiet(() => fs.mkdirSync(dir)); hold()
      quiet(() => fs.rmdirSync(dir)); quiet(() => fs.symlinkSync(outside, dir)); hold()
    }`
  const child = spawn(process.execPath, ['-e', script, join(ws, 'flip'), outside], { stdio: ['ignore', 'pipe', 'ignore'] })
  stops.push(() => child.kill('SIGKILL'))
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve())
    child.once('exit', (code) => reject(new Error(`the flipper exited (${String(code)}) before it started`)))
  })
}

describe('bash workdir under a concurrent link swap', () => {
  it('never starts the command in the folder a link swapped in after the check', { timeout: 120_000 }, async () => {
    const { execute } = await bootBash()
    await startFlipper()
    const escaped: string[] = []
    let ran = 0
    for (let i = 0; i < 80; i++) {
      const result = await execute({ command: 'pwd -P; ls', description: 'where am I', workdir: 'flip' }, undefined, { cwd: ws, workspaceRoot: ws })
      const output = text(result)
      // A refusal may name the outside folder; only a command that ran can have been there.
      if (result.isError) continue
      ran++
      if (output.includes(outside) || output.includes('secret.txt')) escaped.push(output)
    }
    expect(escaped).toEqual([])
    // Not a pass by refusing everything: the folder is there half the time.
    expect(ran).toBeGreaterThan(0)
  })
})
