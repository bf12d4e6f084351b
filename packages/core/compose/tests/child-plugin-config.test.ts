// schemastery's ValidationError through ctx.plugin: a row's plugin that starts a plugin of its own
// (`ctx.plugin(Child, config)`) with a config the child's Config rejects. cordis only logs the raw
// ValidationError (its own words, its stack, no code) and the load went on as if every row ran.
import { inspect } from 'node:util'
import { Context } from '@deepseek-ai/cordis'
import { isReinError } from '@rein/base'
import { afterEach, describe, expect, it } from 'vitest'
import { loadComposition } from '../src/index.ts'
import { fixtures, useComposition } from './harness.ts'

const { writeConfig, load, log } = useComposition()

afterEach(() => {
  delete process.env.REIN_TEST_CHILD_API_KEY
})

async function loadFailure(file: string) {
  const root = new Context()
  const error = await loadComposition({ file, context: root }).then(() => undefined, (caught: unknown) => caught)
  if (!isReinError(error)) throw new Error(`expected a ReinError, got ${String(error)}`)
  const logged = root.logger.buffer.map((line) => inspect(line.args, { depth: 10 })).join('\n')
  return { error, logged }
}

const row = (config: string) => writeConfig(['- id: child', '  name: FIXTURES/starts-child.ts', `  config: ${config}`].join('\n'))
const label = `row "child" (${fixtures}starts-child.ts)`

describe("schemastery's ValidationError through ctx.plugin", () => {
  it('a field of the wrong type fails the load with CONFIG_INVALID naming the file, the row, the plugin it starts and the field', async () => {
    const file = row('{ timeoutMs: "abc" }')
    const { error, logged } = await loadFailure(file)
    expect(error.code).toBe('CONFIG_INVALID')
    expect(error.details?.problems).toEqual([`${label}: Child, a plugin it starts, was given an invalid config: config.timeoutMs: expected number but got abc`])
    expect(error.message).toContain(file)
    // What the loader logs for it is that problem, not schemastery's error.
    expect(logged).not.toContain('ValidationError')
    expect(logged).toContain('config.timeoutMs: expected number but got abc')
  })

  it('a nested value of a type it does not take is named by its path', async () => {
    const { error } = await loadFailure(row('{ nested: { kind: c } }'))
    expect(error.details?.problems).toEqual([`${label}: Child, a plugin it starts, was given an invalid config: config.nested.kind: expected "a" | "b" but got "c"`])
  })

  it('a secret the value was read from is masked', async () => {
    process.env.REIN_TEST_CHILD_API_KEY = 'sk-AbC123XyZ987qweRty'
    const { error, logged } = await loadFailure(row('{ timeoutMs: !!js process.env.REIN_TEST_CHILD_API_KEY }'))
    expect(error.details?.problems).toEqual([`${label}: Child, a plugin it starts, was given an invalid config: config.timeoutMs: expected number but got ***`])
    expect(`${inspect(error, { depth: 10 })}\n${logged}`).not.toMatch(/AbC123|XyZ987|qweRty/)
  })

  it('a valid config starts the row and the plugin it starts', async () => {
    await load(row('{ timeoutMs: 5, nested: { kind: b } }'))
    expect(log()).toEqual(['start child'])
  })

  it('at a reload, the edit is refused and the row is put back as it ran', async () => {
    const file = row('{ timeoutMs: 5 }')
    const loaded = await load(file)
    row('{ timeoutMs: -1 }')
    const error = await loaded.reload().then(() => undefined, (caught: unknown) => caught)
    if (!isReinError(error)) throw new Error('expected the reload to be refused')
    expect(error.details?.problems).toEqual([expect.stringContaining(`${label}: Child, a plugin it starts, was given an invalid config: config.timeoutMs:`)])
    expect(loaded.rows()[0]?.config).toMatchObject({ timeoutMs: 5 })
  })
})
