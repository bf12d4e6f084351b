// rows() shows what each row runs with; reload() says which rows an edit touched; names resolve from a list of folders.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fixtures, rejection, useComposition } from './harness.ts'

const { dir, writeConfig, load } = useComposition()

const rows = (...lines: string[]) => lines.join('\n')

/** A package `name` in `<folder>/node_modules` whose plugin records `<tag>` when it starts (or fails to start, with `fails`). */
function installPackage(folder: string, name: string, tag: string, fails = false) {
  const root = join(folder, 'node_modules', name)
  mkdirSync(root, { recursive: true })
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name, type: 'module', exports: './index.js' }))
  writeFileSync(join(root, 'index.js'), [
    `export const name = ${JSON.stringify(name)}`,
    'export const apply = () => {',
    fails ? `  throw new Error(${JSON.stringify(`${tag} cannot start`)})` : `  ((globalThis.composeLog ??= [])).push(${JSON.stringify(`start ${tag}`)})`,
    '}',
    '',
  ].join('\n'))
}

describe('rows()', () => {
  it('lists each row with the config its plugin runs with: !!js evaluated, defaults filled in', async () => {
    process.env.REIN_TEST_LABEL = 'from-env'
    const file = writeConfig([
      '- id: counter',
      '  name: FIXTURES/counter.ts',
      '  config: { label: !!js process.env.REIN_TEST_LABEL }',
      '- id: user',
      '  name: FIXTURES/needs-counter.ts',
      '- id: off',
      '  name: FIXTURES/counter.ts',
      '  disabled: true',
      '  config: { label: !!js process.env.REIN_TEST_LABEL, start: 3 }',
    ].join('\n'))
    const composition = await load(file)
    expect(composition.rows()).toEqual([
      { id: 'counter', name: `${fixtures}counter.ts`, disabled: false, config: { label: 'from-env', start: 0, limit: 1000 } },
      { id: 'user', name: `${fixtures}needs-counter.ts`, disabled: false, config: undefined },
      // Not started: the config as written, an expression as its text.
      { id: 'off', name: `${fixtures}counter.ts`, disabled: true, config: { label: '!!js process.env.REIN_TEST_LABEL', start: 3 } },
    ])
  })

  it('names the group of a row inside one', async () => {
    const file = writeConfig([
      '- id: parts',
      '  name: FIXTURES/group.ts',
      '  group: true',
      '  config:',
      '    - id: counter',
      '      name: FIXTURES/counter.ts',
      '      config: { label: inner }',
    ].join('\n'))
    const composition = await load(file)
    expect(composition.rows()).toEqual([
      { id: 'parts', name: `${fixtures}group.ts`, disabled: false, config: undefined },
      { id: 'counter', name: `${fixtures}counter.ts`, group: 'parts', disabled: false, config: { label: 'inner', start: 0, limit: 1000 } },
    ])
  })
})

describe('reload() reports what changed', () => {
  it('names the rows an edit added, removed and changed, by id', async () => {
    const file = writeConfig(rows(
      '- { id: counter, name: FIXTURES/counter.ts, config: { label: a } }',
      '- { id: first, name: FIXTURES/recorder.ts, config: { name: first } }',
      '- { id: same, name: FIXTURES/recorder.ts, config: { name: same } }',
    ))
    const composition = await load(file)
    writeConfig(rows(
      '- { id: counter, name: FIXTURES/counter.ts, config: { label: b } }',
      '- { id: same, name: FIXTURES/recorder.ts, config: { name: same } }',
      '- { id: second, name: FIXTURES/recorder.ts, config: { name: second } }',
    ))
    expect(await composition.reload()).toEqual({ added: ['second'], removed: ['first'], changed: ['counter'] })
    expect(composition.ctx.counter.config.label).toBe('b')
  })

  it('counts a row that was disabled or enabled, or names another plugin, as changed', async () => {
    const file = writeConfig(rows(
      '- { id: one, name: FIXTURES/recorder.ts, config: { name: one } }',
      '- { id: two, name: FIXTURES/recorder.ts, config: { name: two } }',
    ))
    const composition = await load(file)
    writeConfig(rows(
      '- { id: one, name: FIXTURES/recorder.ts, config: { name: one }, disabled: true }',
      '- { id: two, name: FIXTURES/counter.ts, config: { label: two } }',
    ))
    expect(await composition.reload()).toEqual({ added: [], removed: [], changed: ['one', 'two'] })
  })

  it('reports nothing when the edit touched only comments', async () => {
    const file = writeConfig('- { id: counter, name: FIXTURES/counter.ts, config: { label: a } }\n')
    const composition = await load(file)
    writeConfig('# a comment\n- { id: counter, name: FIXTURES/counter.ts, config: { label: a } }\n')
    expect(await composition.reload()).toEqual({ added: [], removed: [], changed: [] })
  })

  it('still rejects an invalid edit, and the next report compares against the rows that ran', async () => {
    const file = writeConfig('- { id: counter, name: FIXTURES/counter.ts, config: { label: a } }\n')
    const composition = await load(file)
    writeConfig('- { id: counter, name: FIXTURES/counter.ts, config: { label: a, start: -1 } }\n')
    expect((await rejection(composition.reload())).code).toBe('CONFIG_INVALID')
    writeConfig('- { id: counter, name: FIXTURES/counter.ts, config: { label: c } }\n')
    expect(await composition.reload()).toEqual({ added: [], removed: [], changed: ['counter'] })
  })
})

describe('resolveFrom: a list of folders', () => {
  it('resolves a package from the first folder that has it', async () => {
    const mine = join(dir(), 'project')
    const fallback = join(dir(), 'fallback')
    installPackage(mine, 'rein-plugin-both', 'mine')
    installPackage(fallback, 'rein-plugin-both', 'fallback')
    installPackage(fallback, 'rein-plugin-only-fallback', 'only-fallback')
    const file = writeConfig(rows('- { id: both, name: rein-plugin-both }', '- { id: other, name: rein-plugin-only-fallback }'))
    await load(file, { resolveFrom: [mine, fallback] })
    expect((globalThis as Record<string, unknown>).composeLog).toEqual(['start mine', 'start only-fallback'])
  })

  it('resolves again at a reload: a package installed since the load wins over the one found then', async () => {
    const mine = join(dir(), 'project')
    const fallback = join(dir(), 'fallback')
    installPackage(fallback, 'rein-plugin-both', 'fallback')
    const file = writeConfig('- { id: first, name: rein-plugin-both }\n')
    const composition = await load(file, { resolveFrom: [mine, fallback] })
    installPackage(mine, 'rein-plugin-both', 'mine')
    writeConfig(rows('- { id: first, name: rein-plugin-both }', '- { id: second, name: rein-plugin-both }'))
    await composition.reload()
    expect((globalThis as Record<string, unknown>).composeLog).toEqual(['start fallback', 'start mine'])
  })

  it('puts back the package that ran when a reload is rejected, not one installed since', async () => {
    const mine = join(dir(), 'project')
    const fallback = join(dir(), 'fallback')
    installPackage(fallback, 'rein-plugin-both', 'fallback')
    installPackage(fallback, 'rein-plugin-boom', 'boom', true)
    const file = writeConfig('- { id: first, name: rein-plugin-both }\n')
    const composition = await load(file, { resolveFrom: [mine, fallback] })
    installPackage(mine, 'rein-plugin-both', 'mine')
    writeConfig('- { id: first, name: rein-plugin-boom }\n')
    expect((await rejection(composition.reload())).code).toBe('CONFIG_INVALID')
    expect((globalThis as Record<string, unknown>).composeLog).toEqual(['start fallback', 'start fallback'])
  })

  it('says the package is missing when no folder has it', async () => {
    const file = writeConfig('- { id: ghost, name: rein-plugin-nowhere }\n')
    const composition = load(file, { resolveFrom: [join(dir(), 'a'), join(dir(), 'b')] })
    const { problems } = await rejection(composition)
    expect(problems).toEqual([expect.stringMatching(/^row "ghost" \(rein-plugin-nowhere\): cannot load the plugin: Cannot find package 'rein-plugin-nowhere'/)])
  })
})
