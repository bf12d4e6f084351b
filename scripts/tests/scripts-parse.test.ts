// The plain-JavaScript runners are not type-checked or linted and run only under `pnpm bench` or
// `pnpm soak`; a syntax error in one (a quote inside a quoted string) stopped `pnpm bench` at its
// start. Each is checked here with `node --check`, so `pnpm test` notices.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const folders = ['bench/loop', 'bench/peers', 'soak', 'scripts']
const scripts = folders.flatMap((folder) => readdirSync(join(root, folder)).filter((name) => name.endsWith('.mjs')).map((name) => join(folder, name)))

describe('the .mjs runners of bench, soak and scripts', () => {
  it('are found', () => {
    expect(scripts).toContain('bench/loop/report.mjs')
  })

  it.each(scripts)('%s parses', (script) => {
    const check = spawnSync(process.execPath, ['--check', join(root, script)], { encoding: 'utf8' })
    expect(check.stderr).toBe('')
    expect(check.status).toBe(0)
  })
})
