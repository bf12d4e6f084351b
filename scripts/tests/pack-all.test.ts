import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { isReinError } from '@rein/base'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { packAll, packedManifest, workspaceRanges, type Manifest } from '../pack-all.ts'

let root: string
let destination: string
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'rein-pack-all-'))
  destination = join(root, 'dist-packages')
  write('package.json', { name: 'root', private: true })
  write('pnpm-workspace.yaml', 'packages:\n  - packages/*/*\n')
})
afterEach(() => rmSync(root, { recursive: true, force: true }))

function write(path: string, content: unknown) {
  const full = join(root, path)
  mkdirSync(dirname(full), { recursive: true })
  writeFileSync(full, typeof content === 'string' ? content : JSON.stringify(content))
}

/** A package as the build leaves it: its manifest, and `dist/index.mjs` unless `built` is false. */
function pkg(dir: string, manifest: Manifest, built = true) {
  write(`${dir}/package.json`, {
    version: '1.2.3',
    type: 'module',
    files: ['dist'],
    exports: { '.': { '@rein/source': './src/index.ts', default: './dist/index.mjs' }, './package.json': './package.json' },
    ...manifest,
  })
  write(`${dir}/src/index.ts`, 'export {}\n')
  if (built) write(`${dir}/dist/index.mjs`, 'export {}\n')
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(() => { throw new Error('expected a rejection') }, (error: unknown) => error)
}

describe('pack:all', () => {
  it('packs the public packages with workspace ranges rewritten, and leaves private ones out', async () => {
    pkg('packages/core/a', { name: '@x/a', dependencies: { '@x/b': 'workspace:^' } })
    pkg('packages/core/b', { name: '@x/b' })
    pkg('packages/test/private', { name: '@x/private', private: true }, false)
    // A package.json inside node_modules or a build folder is not a workspace package.
    write('packages/core/a/node_modules/dep/package.json', { name: 'dep', version: '0.0.1' })

    const tarballs = await packAll(root, destination)

    expect(tarballs.map((file) => basename(file)).sort()).toEqual(['x-a-1.2.3.tgz', 'x-b-1.2.3.tgz'])
    expect(readdirSync(destination).sort()).toEqual(['x-a-1.2.3.tgz', 'x-b-1.2.3.tgz'])
    const a = await packedManifest(join(destination, 'x-a-1.2.3.tgz'))
    expect(a.dependencies).toEqual({ '@x/b': '^1.2.3' })
  })

  it('packs nothing when a build output is missing, and names each package, file and the command', async () => {
    pkg('packages/core/a', { name: '@x/a' }, false)
    pkg('packages/app/cli', { name: '@x/cli', bin: { x: './dist/bin.mjs' } })
    write('dist-packages/stale-0.0.1.tgz', '')

    const error = await rejection(packAll(root, destination))

    expect(isReinError(error, 'PACK_NOT_READY')).toBe(true)
    expect(isReinError(error) && error.details?.problems).toEqual([
      'packages/app/cli: ./dist/bin.mjs is missing; run `pnpm build` first',
      'packages/core/a: ./dist/index.mjs is missing; run `pnpm build` first',
    ])
    // The earlier tarballs stay until a pack can replace them all.
    expect(readdirSync(destination)).toEqual(['stale-0.0.1.tgz'])
  })

  it('refuses a public package whose dependency is a private workspace package npm could not install', async () => {
    pkg('packages/core/a', { name: '@x/a', dependencies: { '@x/private': 'workspace:^' }, devDependencies: { '@x/dev': 'workspace:^' } })
    pkg('packages/test/private', { name: '@x/private', private: true })

    const error = await rejection(packAll(root, destination))

    expect(isReinError(error, 'PACK_NOT_READY')).toBe(true)
    // devDependencies are not installed with a package, so a private one there is fine.
    expect(isReinError(error) && error.details?.problems).toEqual([
      'packages/core/a: dependencies names @x/private, which is not a public package under packages/, so it is not packed and npm could not install it',
    ])
    expect(existsSync(destination)).toBe(false)
  })

  it('refuses a build that loads a package its manifest would not install (a stale or unbundled build)', async () => {
    pkg('packages/core/a', { name: '@x/a', dependencies: { '@x/declared': '1.0.0' }, peerDependencies: { peer: '1.0.0' }, devDependencies: { 'dev-only': '1.0.0' } })
    write('packages/core/a/dist/index.mjs', [
      'import { a } from "@x/declared/sub";',
      'import peer from "peer";',
      'import { readFileSync } from "node:fs";',
      'import os from "os";',
      'import "@x/a/self";',
      'import { b } from "./chunk.mjs";',
      'import dev from "dev-only";',
      'const lazy = () => import("lodash/fp");',
      'const shim = __require("util"), pad = __require("left-pad");',
      'const glob = createRequire(import.meta.url)("picomatch");',
      // Strings that only look like loads: a variable name, a sentence, a template.
      'const name = process.env["OTEL_SERVICE_NAME"]; const hint = "write: import X from \'Your Package\'";',
    ].join('\n'))
    write('packages/core/a/dist/chunk.mjs', 'export { b } from "chalk";\n')

    const error = await rejection(packAll(root, destination))

    expect(isReinError(error, 'PACK_NOT_READY')).toBe(true)
    const line = (file: string, name: string) => `packages/core/a: dist/${file} loads ${name}, which its package.json does not list in dependencies or peerDependencies; declare it, or bundle it into the build`
    expect(isReinError(error) && error.details?.problems).toEqual([
      line('chunk.mjs', 'chalk'),
      line('index.mjs', 'dev-only'),
      line('index.mjs', 'left-pad'),
      line('index.mjs', 'lodash'),
      line('index.mjs', 'picomatch'),
    ])
    expect(existsSync(destination)).toBe(false)
  })

  it('finds a workspace range left in any dependency field of a packed manifest', () => {
    expect(workspaceRanges({
      dependencies: { '@x/a': '^1.0.0', '@x/b': 'workspace:^' },
      peerDependencies: { '@x/c': 'workspace:*' },
      devDependencies: { '@x/d': 'workspace:~' },
    })).toEqual(['dependencies.@x/b: workspace:^', 'peerDependencies.@x/c: workspace:*', 'devDependencies.@x/d: workspace:~'])
  })
})
