/**
 * A tool package that ships TypeScript source, run by a `rein` that cannot run TypeScript (the
 * built command on Node 20): one clear line with exit 2, no stack trace (issue #9 §6).
 */

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { spawnRein } from './harness.ts'

/** Makes the process refuse TypeScript outside rein's sources, as plain Node 20 refuses all of it. */
const NO_TYPESCRIPT = fileURLToPath(new URL('../../../core/compose/tests/fixtures/node-without-typescript.mjs', import.meta.url))

let dir: string | undefined
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

describe('a tool package that was never built', () => {
  it('stops rein run with PLUGIN_NOT_BUILT, saying how to build it, before anything runs', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rein-not-built-'))
    const root = join(dir, 'node_modules', 'rein-tool-typed')
    mkdirSync(join(root, 'src'), { recursive: true })
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'rein-tool-typed', type: 'module', exports: { '.': './src/index.ts' } }))
    writeFileSync(join(root, 'src', 'index.ts'), "export const name: string = 'typed'\nexport const apply = (): void => {}\n")
    writeFileSync(join(dir, 'cordis.yml'), "- { id: tools, name: '@rein/tools' }\n- { id: typed, name: rein-tool-typed }\n")
    const run = await spawnRein(dir, ['run', 'hi'], undefined, { REIN_HOME: join(dir, 'home') }, ['--import', NO_TYPESCRIPT])
    expect(run.code).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr).toBe([
      `rein: PLUGIN_NOT_BUILT: ${join(dir, 'cordis.yml')} has a problem:`,
      `  - row "typed" (rein-tool-typed): the package rein-tool-typed ships TypeScript source (${join(root, 'src', 'index.ts')}), which Node cannot run: build it (npm run build, tsc or tsdown) and point "exports" (or "main") in its package.json at the built .js file`,
      '',
    ].join('\n'))
  })
})
