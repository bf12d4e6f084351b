// A `!!js` value that gives undefined (it reads an environment variable that is unset) would let the
// plugin's schema put its default in the field without a word: a gateway's baseURL read from an
// unset variable became the public API's, and the gateway's key went there. It is refused instead,
// at load and at a reload, naming the field.
import { isReinError } from '@rein/base'
import { afterEach, describe, expect, it } from 'vitest'
import { fixtures, useComposition } from './harness.ts'

const { writeConfig, load } = useComposition()

afterEach(() => {
  delete process.env.REIN_TEST_UNSET
})

const counter = (field: string) => ['- id: counter', '  name: FIXTURES/counter.ts', '  config:', '    label: a', `    ${field}`].join('\n')
const UNDEFINED = 'config.limit: the !!js expression gave undefined (does it read an environment variable that is unset?); give the field a value, or leave it out for its default'

describe('a !!js value that gives undefined', () => {
  it('fails the load naming the field, rather than the schema filling in its default', async () => {
    delete process.env.REIN_TEST_UNSET
    const error = await load(writeConfig(counter('limit: !!js process.env.REIN_TEST_UNSET'))).then(() => undefined, (caught: unknown) => caught)
    expect(isReinError(error) && { code: error.code, problems: error.details?.problems }).toEqual({
      code: 'CONFIG_INVALID',
      problems: [`row "counter" (${fixtures}counter.ts): ${UNDEFINED}`],
    })
  })

  it('fails a reload that brings one in, and the running row keeps its config', async () => {
    const loaded = await load(writeConfig(counter('limit: 5')))
    writeConfig(counter('limit: !!js process.env.REIN_TEST_UNSET'))
    const error = await loaded.reload().then(() => undefined, (caught: unknown) => caught)
    expect(isReinError(error) && error.details?.problems).toEqual([expect.stringContaining(UNDEFINED)])
    expect((loaded.ctx as unknown as { counter: { config: { limit: number } } }).counter.config.limit).toBe(5)
  })

  it('fails the load when the value it gives holds undefined (an object built from an unset variable), naming the field inside', async () => {
    const row = ['- id: any', '  name: FIXTURES/any-value.ts', '  config:', '    apiKey: pk-1', '    extra: !!js "({ url: process.env.REIN_TEST_UNSET, list: [1] })"'].join('\n')
    const error = await load(writeConfig(row)).then(() => undefined, (caught: unknown) => caught)
    expect(isReinError(error) && error.details?.problems).toEqual([expect.stringContaining('config.extra.url: the !!js expression gave undefined')])
  })

  it('is fine once the variable is set (a value, even an empty string, is what was asked for)', async () => {
    process.env.REIN_TEST_UNSET = '7'
    const loaded = await load(writeConfig(counter('limit: !!js Number(process.env.REIN_TEST_UNSET)')))
    expect((loaded.ctx as unknown as { counter: { config: { limit: number } } }).counter.config.limit).toBe(7)
  })
})
