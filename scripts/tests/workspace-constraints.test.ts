import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { checkWorkspace } from '../workspace-constraints.ts'

const README = '# x\n\n## Config\n\nNone.\n\n## Model experience\n\nNone.\n\n## Limitations\n\nNone.\n'

let root: string
afterEach(() => rmSync(root, { recursive: true, force: true }))

function write(path: string, content: unknown) {
  const full = join(root, path)
  mkdirSync(dirname(full), { recursive: true })
  writeFileSync(full, typeof content === 'string' ? content : JSON.stringify(content))
}

function goodPackage(dir: string, overrides: Record<string, unknown> = {}) {
  const pkg = dir.split('/').pop()
  write(`${dir}/package.json`, {
    name: `@rein/${pkg}`,
    version: '1.0.0',
    type: 'module',
    exports: { '.': { '@rein/source': './src/index.ts', types: './dist/index.d.mts', default: './dist/index.mjs' } },
    publishConfig: { exports: { '.': { types: './dist/index.d.mts', default: './dist/index.mjs' } } },
    dependencies: { '@rein/base': 'workspace:^' },
    peerDependencies: { '@deepseek-ai/cordis': '4.0.4' },
    devDependencies: { '@deepseek-ai/cordis': '4.0.4' },
    ...overrides,
  })
  write(`${dir}/README.md`, README)
  write(`${dir}/tsconfig.json`, {})
  write(`${dir}/src/index.ts`, "import { Context } from '@deepseek-ai/cordis'\n")
}

function workspace(references: string[]) {
  root = mkdtempSync(join(tmpdir(), 'rein-constraints-'))
  write('package.json', { name: 'root', version: '1.0.0', private: true })
  write('tsconfig.json', { files: [], references: references.map((path) => ({ path })) })
}

describe('checkWorkspace', () => {
  it('passes a well-formed package', () => {
    workspace(['packages/core/good'])
    goodPackage('packages/core/good')
    expect(checkWorkspace(root)).toEqual([])
  })

  it('names every broken rule', () => {
    workspace(['packages/core/bad'])
    goodPackage('packages/core/bad', {
      name: '@rein/wrong',
      version: '0.9.0',
      type: 'commonjs',
      exports: { '.': { types: './dist/index.d.mts', default: './dist/index.mjs' } },
      dependencies: { '@rein/base': '^1.0.0', 'left-pad': '^1.3.0' },
      devDependencies: { '@deepseek-ai/cordis': '4.0.3' },
    })
    write('packages/core/bad/README.md', '# bad\n\n## Config\n')
    expect(checkWorkspace(root)).toEqual([
      'packages/core/bad: name is "@rein/wrong"; it must be "@rein/bad" (the folder name)',
      'packages/core/bad: "type" must be "module"',
      'packages/core/bad: version "0.9.0" differs from the root\'s "1.0.0"',
      'packages/core/bad: exports["."] lacks the "@rein/source" condition',
      'packages/core/bad: exports["."] must list "@rein/source" first so it wins',
      'packages/core/bad: dependencies.@rein/base must use the workspace: protocol, not "^1.0.0"',
      'packages/core/bad: dependencies.left-pad must be pinned to an exact version, not "^1.3.0"',
      'packages/core/bad: @deepseek-ai/cordis must be both a peerDependency and a devDependency at the same exact version (peer 4.0.4, dev 4.0.3)',
      'packages/core/bad: README.md lacks the "## Model experience" section',
      'packages/core/bad: README.md lacks the "## Limitations" section',
    ])
  })

  it('keeps the source condition, whose files are not shipped, out of a published manifest', () => {
    workspace(['packages/core/leaky', 'packages/core/stale'])
    goodPackage('packages/core/leaky', { publishConfig: undefined })
    goodPackage('packages/core/stale', { publishConfig: { exports: { '.': { '@rein/source': './src/index.ts', types: './dist/index.d.mts', default: './dist/old.mjs' } } } })
    expect(checkWorkspace(root)).toEqual([
      'packages/core/leaky: publishConfig.exports must be exports without the "@rein/source" condition (src/ is not in the tarball)',
      'packages/core/stale: publishConfig.exports must be exports without the "@rein/source" condition (src/ is not in the tarball)',
    ])
  })

  it('requires cordis as peer and dev when the sources import it', () => {
    workspace(['packages/core/quiet'])
    goodPackage('packages/core/quiet', { peerDependencies: {}, devDependencies: {} })
    expect(checkWorkspace(root)).toEqual([
      'packages/core/quiet: @deepseek-ai/cordis must be both a peerDependency and a devDependency at the same exact version (peer missing, dev missing)',
    ])
  })

  it('rejects packages at the wrong depth, manifests in group folders and unreferenced projects', () => {
    workspace([])
    write('packages/core/package.json', { name: 'group' })
    goodPackage('packages/core/deep/nested')
    goodPackage('packages/tool/orphan')
    expect(checkWorkspace(root)).toEqual([
      'packages/core/deep/nested: a package must sit exactly at packages/<group>/<pkg>',
      'packages/core/package.json: a group folder must not have a package.json (packages go in packages/<group>/<pkg>)',
      'packages/tool/orphan: is not referenced from the root tsconfig.json, so it is never typechecked',
    ])
  })
})
