// A `workdir` that is a folder when it is checked and a link out by the time the shell starts: the
// command must never start outside. Another process flips the name as fast as it can; each call
// either runs inside or is refused, whichever moment it meets.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startLinkFlipper, type LinkFlipper } from '@rein/testkit'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { bootBash, text } from './helpers.ts'

let base: string
let ws: string
let outside: string
const flippers: LinkFlipper[] = []

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'rein-workdir-race-')))
  ws = join(base, 'ws')
  outside = join(base, 'outside')
  mkdirSync(join(ws, 'flip'), { recursive: true })
  mkdirSync(outside)
  writeFileSync(join(outside, 'secret.txt'), 'secret')
})
afterEach(async () => {
  await Promise.all(flippers.splice(0).map((flipper) => flipper.stop()))
})
afterAll(() => rmSync(base, { recursive: true, force: true }))

describe('bash workdir under a concurrent link swap', () => {
  it('never starts the command in the folder a link swapped in after the check', { timeout: 120_000 }, async () => {
    const { execute } = await bootBash()
    // Another process flips `ws/flip` between an empty folder and a link to `outside` until stopped.
    flippers.push(await startLinkFlipper([{ path: join(ws, 'flip'), linkTo: outside, real: { folder: {} } }]))
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
