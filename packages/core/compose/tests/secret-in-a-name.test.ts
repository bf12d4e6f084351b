// A `!!js` label holding a key reaches the session log: a field that names something (a provider,
// a model, a label, an agent's name) is written into the session log (`step/start`,
// `request/header`, `llm/attempt`) and shown in messages as it is. A key read into one from a
// secret-named variable, or pasted into one, is refused before any row runs with it, and never quoted.
import { inspect } from 'node:util'
import { Context } from '@deepseek-ai/cordis'
import { isReinError } from '@rein/base'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadComposition } from '../src/index.ts'
import { fixtures, installed, useComposition } from './harness.ts'

const { writeConfig, load, dispose } = useComposition()

const KEY = 'sk-proj-AbC123XyZ987qweRty456'
const ANY_OF_KEY = /AbC123|XyZ987|qweRty/

beforeEach(() => {
  process.env.REIN_TEST_NAME_API_KEY = KEY
})
afterEach(() => {
  delete process.env.REIN_TEST_NAME_API_KEY
})

async function loadFailure(lines: string[], resolveFrom?: string) {
  const root = new Context()
  const file = writeConfig(lines.join('\n'))
  const error = await loadComposition({ file, context: root, ...(resolveFrom ? { resolveFrom } : {}) }).then(() => undefined, (caught: unknown) => caught)
  if (!isReinError(error)) throw new Error(`expected a ReinError, got ${String(error)}`)
  const logs = root.logger.buffer.map((line) => inspect(line.args, { depth: 10 }))
  return { error, said: [inspect(error, { depth: 10 }), error.message, ...logs].join('\n') }
}

const counter = (label: string) => ['- id: counter', '  name: FIXTURES/counter.ts', '  config:', '    start: 1', `    label: ${label}`]
const openai = (config: string) => ['- id: llm', "  name: '@rein/llm'", '- id: openai', "  name: '@rein/llm-openai'", `  config: { baseURL: 'http://127.0.0.1:9/v1', apiKeyEnv: false, ${config} }`]

describe('a !!js label holding a key reaches the session log', () => {
  it('a label read from a secret-named variable is refused as the row starts, naming the field and the variable, never the value', async () => {
    const { error, said } = await loadFailure(counter('!!js process.env.REIN_TEST_NAME_API_KEY'))
    expect(error.code).toBe('CONFIG_INVALID')
    expect(error.details?.problems).toEqual([
      `row "counter" (${fixtures}counter.ts): config.label: holds the value of REIN_TEST_NAME_API_KEY, a secret; a name is written to the session log and shown in messages as it is, so it must not hold a key: give the name itself`,
    ])
    expect(said).not.toMatch(ANY_OF_KEY)
  })

  it('a label that only holds the key (text around it) is refused as well', async () => {
    const { error, said } = await loadFailure(counter(`!!js "'team ' + process.env.REIN_TEST_NAME_API_KEY"`))
    expect(error.details?.problems).toEqual([expect.stringContaining('config.label: holds the value of REIN_TEST_NAME_API_KEY')])
    expect(said).not.toMatch(ANY_OF_KEY)
  })

  it('a key pasted as a label is refused before any row starts, by the kind of key it looks like', async () => {
    delete process.env.REIN_TEST_NAME_API_KEY
    const { error, said } = await loadFailure(counter('sk-live-0123456789abcdefghijklmn'))
    expect(error.details?.problems).toEqual([
      `row "counter" (${fixtures}counter.ts): config.label: looks like an sk- API key; a name is written to the session log and shown in messages as it is, so it must not hold a key: give the name itself`,
    ])
    expect(said).not.toContain('0123456789abcdefghijklmn')
  })

  it.each([
    ['provider', 'provider: !!js process.env.REIN_TEST_NAME_API_KEY', 'config.provider'],
    ['label', 'label: !!js process.env.REIN_TEST_NAME_API_KEY', 'config.label'],
    ['a model id in the catalog', 'models: [{ id: !!js process.env.REIN_TEST_NAME_API_KEY }]', 'config.models[0].id'],
    ['a model id written out', `models: [{ id: ${KEY} }]`, 'config.models[0].id'],
  ])('in a real provider row, %s holding the key is refused', async (_case, config, field) => {
    const { error, said } = await loadFailure(openai(config), installed.llmOpenai)
    expect(error.code).toBe('CONFIG_INVALID')
    expect(error.details?.problems).toEqual([expect.stringMatching(new RegExp(`^row "openai" \\(@rein/llm-openai\\): ${field.replace(/[[\].]/g, '\\$&')}: (holds the value of REIN_TEST_NAME_API_KEY|looks like an sk- API key)`))])
    expect(said).not.toMatch(ANY_OF_KEY)
  })

  it('a key where a key has its place (under a secret-named key or headers) still loads', async () => {
    const loaded = await load(writeConfig(openai('headers: { Authorization: !!js "\'Bearer \' + process.env.REIN_TEST_NAME_API_KEY" }').join('\n')), { resolveFrom: installed.llmOpenai })
    expect(loaded.rows().map((row) => row.id)).toEqual(['llm', 'openai'])
  })

  it('a word set as a local server\'s key (OPENAI_API_KEY=ollama) does not refuse a provider or label of that name', async () => {
    for (const word of ['ollama', 'lm-studio', 'EMPTY', 'not-needed']) {
      process.env.REIN_TEST_NAME_API_KEY = word
      const loaded = await load(writeConfig([...counter(word), ...openai(`provider: ${word}, label: ${word}`)].join('\n')), { resolveFrom: installed.llmOpenai })
      expect(loaded.rows().map((row) => row.id)).toEqual(['counter', 'llm', 'openai'])
      await dispose()
    }
  })

  it('a model id with "-sk-" inside (a Slovak translation model) is not refused as an sk- API key', async () => {
    // "sk" after a hyphen is a word of the name (en-sk), not the start of a key.
    const model = 'opus-mt-en-sk-finetuned-legal-2024-11'
    const loaded = await load(writeConfig([...counter(model), ...openai(`provider: local, label: ${model}`)].join('\n')), { resolveFrom: installed.llmOpenai })
    expect(loaded.rows().map((row) => row.id)).toEqual(['counter', 'llm', 'openai'])
  })

  it('a key after a space, a colon, an equals sign or a slash in a name is still refused, and a GitHub token after a hyphen', async () => {
    const github = `ghp_${'a1B2c3D4e5'.repeat(4)}`
    for (const label of ['"key sk-live-0123456789abcdefghijklmn"', '"key:sk-live-0123456789abcdefghijklmn"', '"key=sk-live-0123456789abcdefghijklmn"', '"org/sk-live-0123456789abcdefghijklmn"', `"id-${github}"`]) {
      const { error } = await loadFailure(counter(label))
      expect(error.code).toBe('CONFIG_INVALID')
      expect(error.message).toMatch(/looks like (an sk- API key|a GitHub token)/)
    }
  })

  it('a name that is not a secret loads, and so does a secret in a field that is no name', async () => {
    const loaded = await load(writeConfig([...counter(`!!js "'counter'"`), '- id: any', '  name: FIXTURES/any-value.ts', '  config:', '    extra: !!js process.env.REIN_TEST_NAME_API_KEY'].join('\n')))
    expect(loaded.rows().map((row) => row.id)).toEqual(['counter', 'any'])
  })

  it('at a reload that edits a running row to read the key into its label, the row runs on as it was', async () => {
    const file = writeConfig(counter('a').join('\n'))
    const loaded = await load(file)
    writeConfig(counter('!!js process.env.REIN_TEST_NAME_API_KEY').join('\n'))
    const error = await loaded.reload().then(() => undefined, (caught: unknown) => caught)
    if (!isReinError(error)) throw new Error('expected the reload to be refused')
    expect(error.details?.problems).toEqual([expect.stringContaining('config.label: holds the value of REIN_TEST_NAME_API_KEY, a secret')])
    expect(inspect(error, { depth: 10 })).not.toMatch(ANY_OF_KEY)
    expect(loaded.rows()[0]?.config).toMatchObject({ label: 'a' })
  })
})
