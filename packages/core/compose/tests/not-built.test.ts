/**
 * A tool package that ships TypeScript source, loaded by a Node that cannot run it (the built
 * `rein` on Node 20): one PLUGIN_NOT_BUILT line saying how to build it, not Node's bare error.
 * Each case runs in a real process that refuses `.ts` outside rein's sources the way Node 20 does.
 */

import { execFile } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { fixtures, useComposition } from './harness.ts'

const { dir, writeConfig } = useComposition()
const TSX = createRequire(import.meta.url).resolve('tsx')

interface Outcome {
  code?: string
  message?: string
  problems?: string[]
  loaded?: string[]
}

/** Loads `file` in a fresh Node that runs no TypeScript but rein's own. */
async function loadWithoutTypeScript(file: string): Promise<Outcome> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    '--conditions=@rein/source', '--import', TSX, '--import', join(fixtures, 'node-without-typescript.mjs'),
    join(fixtures, 'load-and-report.ts'), file,
  ], { env: { ...process.env, NODE_OPTIONS: '' } })
  return JSON.parse(stdout) as Outcome
}

/** `node_modules/<name>` with the given package.json fields and files. */
function installPackage(name: string, manifest: Record<string, unknown>, files: Record<string, string>) {
  const root = join(dir(), 'node_modules', name)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name, version: '1.0.0', type: 'module', ...manifest }))
  return root
}

const SOURCE = "export const name: string = 'typed'\nexport const apply = (): void => {}\n"
const BUILT = "export const name = 'typed'\nexport const apply = () => {}\n"

describe('a plugin whose entry is TypeScript source', () => {
  it.each([
    ['exports', { exports: { '.': './src/index.ts' } }, 'src/index.ts'],
    ['main', { main: 'src/index.mts' }, 'src/index.mts'],
    ['a types-first exports map', { exports: { '.': { types: './src/index.cts', default: './src/index.cts' } } }, 'src/index.cts'],
  ])('fails with PLUGIN_NOT_BUILT saying how to build it (entry from %s)', async (_label, manifest, entry) => {
    const root = installPackage('rein-tool-typed', manifest, { [entry]: SOURCE })
    const file = writeConfig('- id: typed\n  name: rein-tool-typed\n')
    const outcome = await loadWithoutTypeScript(file)
    expect(outcome.code).toBe('PLUGIN_NOT_BUILT')
    expect(outcome.problems).toEqual([
      `row "typed" (rein-tool-typed): the package rein-tool-typed ships TypeScript source (${join(root, entry)}), which Node cannot run: build it (npm run build, tsc or tsdown) and point "exports" (or "main") in its package.json at the built .js file`,
    ])
    expect(outcome.message).toBe(`${file} has a problem:\n  - ${outcome.problems?.[0]}`)
  })

  it('loads once exports point at the built JavaScript', async () => {
    installPackage('rein-tool-typed', { exports: { '.': { types: './src/index.ts', default: './dist/index.js' } } }, { 'src/index.ts': SOURCE, 'dist/index.js': BUILT })
    expect(await loadWithoutTypeScript(writeConfig('- id: typed\n  name: rein-tool-typed\n'))).toEqual({ loaded: ['typed'] })
  })

  it('says to compile a row named by path to a TypeScript file, and to name the .js', async () => {
    writeFileSync(join(dir(), 'local-plugin.ts'), SOURCE)
    const outcome = await loadWithoutTypeScript(writeConfig('- id: local\n  name: ./local-plugin.ts\n'))
    expect(outcome.code).toBe('PLUGIN_NOT_BUILT')
    expect(outcome.problems).toEqual([
      `row "local" (./local-plugin.ts): ${join(dir(), 'local-plugin.ts')} is TypeScript, which Node cannot run here: compile it to JavaScript (tsc) and name the .js file in the row`,
    ])
  })

  it('reports it beside the other rows\' problems, under its own code', async () => {
    installPackage('rein-tool-typed', { main: 'src/index.ts' }, { 'src/index.ts': SOURCE })
    const file = writeConfig([
      '- id: counter',
      `  name: ${fixtures}counter.ts`,
      '  config: { label: a, start: -1 }',
      '- id: typed',
      '  name: rein-tool-typed',
    ].join('\n'))
    const outcome = await loadWithoutTypeScript(file)
    expect(outcome.code).toBe('PLUGIN_NOT_BUILT')
    expect(outcome.problems).toEqual([
      `row "counter" (${fixtures}counter.ts): config.start: expected number >= 0 but got -1`,
      expect.stringMatching(/^row "typed" \(rein-tool-typed\): the package rein-tool-typed ships TypeScript source/),
    ])
  })
})
