// scripts/bundle-deps.mjs runs after tsdown in otel-http and compose: what it writes is what users
// load. Here it runs on a built entry of a made-up package whose dependency is CommonJS requiring a
// Node built-in (what the OpenTelemetry SDK does), and the result is imported in a fresh process.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const script = fileURLToPath(new URL('../bundle-deps.mjs', import.meta.url))

let folder: string

function writePackage(name: string, files: Record<string, string>) {
  const dir = join(folder, 'node_modules', name)
  mkdirSync(dir, { recursive: true })
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text)
}

function bundle(...prefixes: string[]) {
  return spawnSync(process.execPath, [script, folder, 'dist/index.mjs', ...prefixes], { encoding: 'utf8' })
}

/** Imports the bundled entry in a fresh process and prints what its `answer()` returns. */
function answer() {
  const entry = JSON.stringify(join(folder, 'dist/index.mjs'))
  return spawnSync(process.execPath, ['--input-type=module', '-e', `import { answer } from ${entry}; console.log(answer())`], { encoding: 'utf8' })
}

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'rein-bundle-deps-'))
  mkdirSync(join(folder, 'dist'))
  writePackage('@made-up/sdk', {
    'package.json': JSON.stringify({ name: '@made-up/sdk', version: '1.2.3', license: 'Apache-2.0', main: 'index.js' }),
    'LICENSE': 'Made-up licence text.',
    'NOTICE': 'Made-up notice the licence asks copies to carry.',
    'index.js': "const os = require('os')\nexports.platform = () => os.platform()\n",
  })
  writePackage('@made-up/esm', {
    'package.json': JSON.stringify({ name: '@made-up/esm', version: '2.0.0', license: '(MIT OR Apache-2.0)', type: 'module', exports: './index.js' }),
    'LICENSE-APACHE': 'Made-up Apache text.',
    'LICENSE-MIT': 'Made-up MIT text.',
    'index.js': 'export const twice = (text) => text + text\n',
  })
  writePackage('kept-external', {
    'package.json': JSON.stringify({ name: 'kept-external', version: '1.0.0', type: 'module', exports: './index.js' }),
    'index.js': 'export const kept = "from node_modules"\n',
  })
  writeFileSync(join(folder, 'dist/index.mjs'), [
    "import { platform } from '@made-up/sdk'",
    "import { kept } from 'kept-external'",
    'export const answer = () => `${platform()} ${kept}`',
    '',
  ].join('\n'))
})

afterEach(() => rmSync(folder, { recursive: true, force: true }))

describe('bundle-deps', () => {
  it('inlines the named CommonJS package so it loads as an ES module, and leaves other imports as imports', () => {
    const result = bundle('@made-up/')
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)

    const built = readFileSync(join(folder, 'dist/index.mjs'), 'utf8')
    expect(built).not.toMatch(/from ["']@made-up\/sdk["']/)
    expect(built).toMatch(/from ["']kept-external["']/)
    // Without the made-up package installed, the entry must still load: it is inside now.
    rmSync(join(folder, 'node_modules/@made-up'), { recursive: true })
    const run = answer()
    expect(run.stderr).toBe('')
    expect(run.stdout.trim()).toBe(`${process.platform} from node_modules`)
  })

  it('writes each inlined package with its version and licence text beside the entry', () => {
    expect(bundle('@made-up/').status).toBe(0)
    const notices = readFileSync(join(folder, 'dist/THIRD-PARTY-NOTICES.txt'), 'utf8')
    expect(notices).toContain('@made-up/sdk@1.2.3 (Apache-2.0)')
    expect(notices).toContain('Made-up licence text.')
    expect(notices).toContain('Made-up notice the licence asks copies to carry.')
    expect(notices).not.toContain('kept-external')
  })

  it('carries every licence file of a package that has one per licence', () => {
    writeFileSync(join(folder, 'dist/index.mjs'), "import { twice } from '@made-up/esm'\nexport const answer = () => twice('a')\n")
    expect(bundle('@made-up/').status).toBe(0)
    const notices = readFileSync(join(folder, 'dist/THIRD-PARTY-NOTICES.txt'), 'utf8')
    expect(notices).toContain('@made-up/esm@2.0.0 ((MIT OR Apache-2.0))')
    expect(notices).toContain('Made-up Apache text.')
    expect(notices).toContain('Made-up MIT text.')
  })

  // esbuild renames the entry's own `require` where the banner adds one; with no banner it stays.
  it.each([
    ['only ES modules come in (no banner)', "import { twice } from '@made-up/esm'", "twice(require('node:path').sep)", '//'],
    ['CommonJS comes in (the banner adds one)', "import { platform } from '@made-up/sdk'", "platform() + require('node:path').sep", `${process.platform}/`],
  ])('bundles an entry that declares its own require when %s', (_case, importLine, body, expected) => {
    writeFileSync(join(folder, 'dist/index.mjs'), [
      "import { createRequire } from 'node:module'",
      importLine,
      'const require = createRequire(import.meta.url)',
      `export const answer = () => ${body}`,
      '',
    ].join('\n'))
    const result = bundle('@made-up/')
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    const run = answer()
    expect(run.stderr).toBe('')
    expect(run.stdout.trim()).toBe(expected)
  })

  it('fails, writing no notices, when nothing matches the prefix (a mistake in the build script)', () => {
    const result = bundle('@nothing-like-this/')
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('nothing matching @nothing-like-this/ was inlined')
    expect(existsSync(join(folder, 'dist/THIRD-PARTY-NOTICES.txt'))).toBe(false)
  })

  it('refuses to run without a folder, an entry and a prefix', () => {
    const result = spawnSync(process.execPath, [script, folder], { encoding: 'utf8' })
    expect(result.status).toBe(2)
    expect(result.stderr).toContain('usage: node scripts/bundle-deps.mjs')
  })
})
