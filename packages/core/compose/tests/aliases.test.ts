// YAML anchors and aliases in a cordis.yml: js-yaml shares an aliased value, but whatever walks or
// copies the rows (validation, the loader, JSON) multiplies it, so an alias chain can make a small
// file huge, and an anchor inside itself makes a value that holds itself.
import { describe, expect, it } from 'vitest'
import { readConfigFile } from '../src/index.ts'
import { rejection, useComposition } from './harness.ts'

const { writeConfig, load, failure } = useComposition()

/**
 * Rows whose config holds `levels` nested lists of `width` aliases of the level below: it expands
 * to about width^levels values. Bounded so that, without a limit, the load still ends (and fails
 * the test) rather than hanging.
 */
function aliasChain(levels: number, width: number): string {
  const lines = ['- id: counter', '  name: FIXTURES/any-value.ts', '  config:', '    apiKey: pk-1', '    extra:']
  lines.push(`      l0: &l0 [${Array.from({ length: width }, () => 'x').join(', ')}]`)
  for (let level = 1; level < levels; level++) {
    lines.push(`      l${level}: &l${level} [${Array.from({ length: width }, () => `*l${level - 1}`).join(', ')}]`)
  }
  return `${lines.join('\n')}\n`
}

const TOO_MANY = /expands to more than 100000 values through its aliases/

describe('YAML aliases in a cordis.yml', () => {
  it('a cordis.yml whose aliases expand to millions of nodes is refused, not loaded', async () => {
    // 10^6 values at its last level from a file of 13 lines; the full "billion laughs" is 9^9.
    const file = writeConfig(aliasChain(6, 10))
    const { code, message, problems } = await failure(file)
    expect(code).toBe('CONFIG_INVALID')
    expect(message).toContain(file)
    expect(problems).toEqual([expect.stringMatching(TOO_MANY)])
    expect(message).toMatch(/write the repeated part out, or use fewer nested aliases/)
  })

  it('refuses such a file on a reload, keeping the running rows', async () => {
    const file = writeConfig(aliasChain(3, 3))
    const loaded = await load(file)
    writeConfig(aliasChain(6, 10))
    expect(await rejection(loaded.reload())).toMatchObject({ code: 'CONFIG_INVALID', problems: [expect.stringMatching(TOO_MANY)] })
    expect(loaded.rows()).toHaveLength(1)
  })

  it('refuses the full billion-laughs shape (9 levels of 9) as it reads the file', async () => {
    // readConfigFile does not walk a row's config, so without a limit this returns rather than hangs.
    const file = writeConfig(aliasChain(9, 9))
    expect(await rejection(readConfigFile(file))).toMatchObject({ code: 'CONFIG_INVALID', problems: [expect.stringMatching(TOO_MANY)] })
  })

  it('counts each alias as a copy of its anchor\'s value: a file whose aliases add 100 000 values is read, one more is refused', async () => {
    // An alias of a list of 1000 items stands for 1001 values where one is written: it adds 1000.
    const rows = (more: string) => `- id: a\n  name: b\n  config:\n    list: &list [${Array(1000).fill('x').join(', ')}]\n    one: &one [y]\n    copies: [${Array(100).fill('*list').join(', ')}${more}]\n`
    expect(await readConfigFile(writeConfig(rows('')))).toHaveLength(1)
    expect(await rejection(readConfigFile(writeConfig(rows(', *one'))))).toMatchObject({ code: 'CONFIG_INVALID', problems: [expect.stringMatching(TOO_MANY)] })
  })

  it('refuses aliases nested deeper than any walk of the rows can go', async () => {
    // Each level holds the one before once: few values, but 1000 deep (20 000 would pass the stack
    // of a recursive walk; without a limit, the load took minutes on paths as long as the chain).
    const lines = ['- id: counter', '  name: FIXTURES/any-value.ts', '  config:', '    apiKey: pk-1', '    extra:', '      l0: &l0 [x]']
    for (let level = 1; level < 1_000; level++) lines.push(`      l${level}: &l${level} [*l${level - 1}]`)
    const { code, problems } = await failure(writeConfig(`${lines.join('\n')}\n`))
    expect(code).toBe('CONFIG_INVALID')
    expect(problems).toEqual([expect.stringMatching(/nests values more than 500 deep through its aliases/)])
  })

  it.each([
    ['a list', '    extra: &self [1, *self]\n', 'config.extra[1] is an alias of config.extra'],
    ['a mapping', '    extra: &self {again: *self}\n', 'config.extra.again is an alias of config.extra'],
    ['a list in a list', '    extra: &self [[[*self]]]\n', 'config.extra[0][0][0] is an alias of config.extra'],
  ])('refuses %s that holds itself through an alias (an anchor inside its own value)', async (_kind, extra, said) => {
    const { code, problems } = await failure(writeConfig(`- id: counter\n  name: FIXTURES/any-value.ts\n  config:\n    apiKey: pk-1\n${extra}`))
    expect(code).toBe('CONFIG_INVALID')
    expect(problems).toEqual([`row "counter": ${said}, which holds it: a value cannot contain its own alias (it would never end); write the value out`])
  })

  it('refuses a row, or the whole file, that holds itself through an alias', async () => {
    const row = await failure(writeConfig('- &row\n  id: counter\n  name: FIXTURES/any-value.ts\n  config: {apiKey: pk-1, extra: *row}\n'))
    expect(row.problems).toEqual(['row "counter": config.extra is an alias of the row, which holds it: a value cannot contain its own alias (it would never end); write the value out'])
    const file = await failure(writeConfig('&rows [{id: a, name: b}, *rows]\n'))
    expect(file.problems).toEqual(['row #2: the row is an alias of the whole file, which holds it: a value cannot contain its own alias (it would never end); write the value out'])
    const mapping = await failure(writeConfig('&top {rows: [*top]}\n'))
    expect(mapping.problems).toEqual(['the file: rows[0] is an alias of the whole file, which holds it: a value cannot contain its own alias (it would never end); write the value out'])
  })

  it('loads a file that shares a model list through anchors and aliases, merge keys read as written', async () => {
    // The dialect (YAML's JSON schema) does not merge: `<<` is an ordinary key inside a config.
    const file = writeConfig([
      '- id: counter',
      '  name: FIXTURES/any-value.ts',
      '  config:',
      '    apiKey: pk-1',
      '    extra:',
      '      models: &models [gpt-4o, gpt-4o-mini, o3]',
      '      base: &base {timeout: 30, retries: 2, models: *models}',
      '      fast: {<<: *base, models: *models}',
      '      lists: [*models, *models, *base]',
      '',
    ].join('\n'))
    const [row] = (await load(file)).rows()
    const models = ['gpt-4o', 'gpt-4o-mini', 'o3']
    const base = { timeout: 30, retries: 2, models }
    expect(row?.config).toMatchObject({ extra: { models, base, fast: { '<<': base, models }, lists: [models, models, base] } })
  })

  it('loads a file with more values than the limit written out, none through an alias', async () => {
    // Only what aliases add counts: a list written out is no bigger than its text.
    const items = Array.from({ length: 30_000 }, () => '      - [a, b, c]')
    const file = writeConfig(['- id: counter', '  name: FIXTURES/any-value.ts', '  config:', '    apiKey: pk-1', '    extra:', ...items, ''].join('\n'))
    expect((await load(file)).rows()).toHaveLength(1)
  })
})
