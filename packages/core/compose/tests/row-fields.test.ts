// What a demanding user writes wrong in a row's own fields (not its config), and what the report says to do.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fixtures, useComposition } from './harness.ts'

const { dir, log, writeConfig, load, failure } = useComposition()

describe('a row\'s own fields', () => {
  it.each([
    ['confg', 'config'],
    ['disable', 'disabled'],
    ['Name', 'name'],
    ['injects', 'inject'],
  ])('suggests the row field a misspelt %s meant', async (typed, meant) => {
    const file = writeConfig(`- id: x\n  name: FIXTURES/counter.ts\n  ${typed}: 1\n`)
    const { problems } = await failure(file)
    expect(problems).toContain(`row "x": unknown field "${typed}"; did you mean ${meant}?`)
  })

  it('lists the row fields when nothing is near the unknown one', async () => {
    const { problems } = await failure(writeConfig('- id: x\n  name: FIXTURES/counter.ts\n  settings: {}\n'))
    expect(problems).toEqual(['row "x": unknown field "settings" (a row has id, name, config, disabled, group, inject, isolate, intercept)'])
  })

  it('says a YAML merge key is not read, rather than only that "<<" is an unknown field', async () => {
    const text = '- &base\n  id: a\n  name: FIXTURES/counter.ts\n  config: {label: a}\n- <<: *base\n  id: b\n'
    const { problems } = await failure(writeConfig(text))
    expect(problems).toContain('row "b": unknown field "<<": YAML merge keys (<<: *anchor) are not read in a cordis.yml; write the row\'s fields out')
  })

  it('says an id that is a number must be quoted, rather than that the row has no id', async () => {
    const { problems } = await failure(writeConfig('- id: 5\n  name: FIXTURES/counter.ts\n'))
    expect(problems).toEqual(['row #1: id must be text, not 5: quote it (id: "5")'])
  })

  it.each([
    ['"yes"', 'group: "yes"'],
    ['1', 'group: 1'],
  ])('refuses group: %s, which would turn the row into a group without a word', async (shown, field) => {
    const { problems } = await failure(writeConfig(`- id: x\n  name: FIXTURES/counter.ts\n  ${field}\n  config: {label: a}\n`))
    expect(problems).toEqual([`row "x": group must be true or false (unquoted), not ${shown}`])
    expect(log()).toEqual([])
  })

  it('says a local plugin file does not exist, relative to the composition, not where compose was imported from', async () => {
    const { problems } = await failure(writeConfig('- id: mine\n  name: ./my-tool.mjs\n'))
    expect(problems).toEqual([
      `row "mine" (./my-tool.mjs): cannot load the plugin: ${join(dir(), 'my-tool.mjs')} does not exist; the path is relative to the folder of ${join(dir(), 'cordis.yml')}: check it, or build the file first`,
    ])
  })

  it('says a path through a file cannot be loaded as a problem of the row, not a raw ENOTDIR from compose', async () => {
    writeFileSync(join(dir(), 'afile.mjs'), 'export const apply = () => {}\n')
    const { problems } = await failure(writeConfig('- id: mine\n  name: ./afile.mjs/x.mjs\n'))
    expect(problems).toEqual([expect.stringMatching(/^row "mine" \(\.\/afile\.mjs\/x\.mjs\): cannot load the plugin: /)])
  })

  it('says a local package folder must be named by its entry file, or installed', async () => {
    mkdirSync(join(dir(), 'my-tool'))
    writeFileSync(join(dir(), 'my-tool', 'package.json'), '{"name": "my-tool", "type": "module", "exports": "./index.mjs"}')
    writeFileSync(join(dir(), 'my-tool', 'index.mjs'), 'export const apply = () => {}\n')
    const { problems } = await failure(writeConfig('- id: mine\n  name: ./my-tool\n'))
    expect(problems).toEqual([
      `row "mine" (./my-tool): cannot load the plugin: ${join(dir(), 'my-tool')} is a folder, which Node does not import: name the file the package runs (its package.json's exports or main, e.g. ./my-tool/dist/index.mjs), or install the package beside the file (npm install ./my-tool) and name it by its package name`,
    ])
  })
})

describe('a group of rows', () => {
  it('starts a group named cordis:group, which no package has to provide', async () => {
    const file = writeConfig([
      '- id: parts',
      "  name: 'cordis:group'",
      '  group: true',
      '  config:',
      '    - id: counter',
      '      name: FIXTURES/counter.ts',
      '      config: {label: inner}',
    ].join('\n'))
    const composition = await load(file)
    expect(composition.ctx.counter.value).toBe(0)
  })

  it('refuses group: true on a plugin that is no group, whose rows would never start without a word', async () => {
    const file = writeConfig([
      '- id: parts',
      '  name: FIXTURES/recorder.ts',
      '  group: true',
      '  config:',
      '    - id: counter',
      '      name: FIXTURES/counter.ts',
      '      config: {label: inner}',
    ].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([`row "parts" (${fixtures}recorder.ts): group: true needs a group plugin as the row's name (name: 'cordis:group'), and this one is not a group`])
    expect(log()).toEqual([])
  })

  it('refuses cordis:group without group: true, which would start none of its rows', async () => {
    const file = writeConfig([
      '- id: parts',
      "  name: 'cordis:group'",
      '  config:',
      '    - id: counter',
      '      name: FIXTURES/counter.ts',
      '      config: {label: inner}',
    ].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([`row "parts" (cordis:group): the plugin is a group: add group: true to the row, and list its rows under config`])
  })
})

describe('two rows providing one service', () => {
  it('names the row that already provides it and says to keep one', async () => {
    const file = writeConfig([
      '- id: first',
      '  name: FIXTURES/counter.ts',
      '  config: {label: a}',
      '- id: second',
      '  name: FIXTURES/counter.ts',
      '  config: {label: b}',
    ].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([
      `row "second" (${fixtures}counter.ts): provides the service "counter", which row "first" (${fixtures}counter.ts) provides already; keep one of the two rows (remove or disable the other)`,
    ])
  })
})
