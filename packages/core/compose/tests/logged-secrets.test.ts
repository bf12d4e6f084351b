// A secret in a row's invalid config (an environment secret a `!!js` value reads into the wrong
// field, or a key pasted there) must not reach a log line of the context a library user composes
// into, nor any error compose throws, its cause chain included. The CLI masks what it prints; a
// library user's own log exporter gets what cordis logs as it is.
import { inspect } from 'node:util'
import { Context, Logger, type Exporter } from '@deepseek-ai/cordis'
import { isReinError } from '@rein/base'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadComposition, type Composition } from '../src/index.ts'
import { fixtures, installed, useComposition } from './harness.ts'

const { writeConfig } = useComposition()

const KEY = 'sk-AbC123XyZ987qweRty'
const ANY_OF_KEY = /AbC123|XyZ987|qweRty/

/** A root context whose every log line (debug included) is kept, formatted and with its arguments inspected. */
function loggedContext() {
  const root = new Context()
  const lines: { type: string; text: string }[] = []
  const exporter: Exporter = {
    colors: false,
    levels: { default: 3 },
    export: (message) => lines.push({ type: message.type, text: `${Logger.format(exporter, message)}\n${inspect(message.args, { depth: 10 })}` }),
  }
  root.logger.exporter(exporter)
  return { root, lines }
}

/** The error, its details and every link of its cause chain, as inspect shows them (own properties too). */
function everythingIn(error: unknown): string {
  const said: string[] = []
  for (let at: unknown = error; said.length < 20 && at !== undefined; at = at instanceof Error ? at.cause : undefined) {
    said.push(inspect(at, { depth: 10 }), at instanceof Error ? `${at.message}\n${at.stack ?? ''}` : '')
  }
  return said.join('\n')
}

async function caught(work: Promise<unknown>) {
  const error = await work.then(() => undefined, (thrown: unknown) => thrown)
  if (!isReinError(error)) throw new Error(`expected a ReinError, got ${String(error)}`)
  return error
}

let loaded: Composition | undefined
beforeEach(() => {
  process.env.REIN_TEST_LOG_API_KEY = KEY
})
afterEach(async () => {
  await loaded?.dispose()
  loaded = undefined
  delete process.env.REIN_TEST_LOG_API_KEY
})

const counterRow = (start: string, id = 'counter') => [`- id: ${id}`, '  name: FIXTURES/counter.ts', '  config:', '    label: a', `    start: ${start}`]
const fromTheSecret = '!!js process.env.REIN_TEST_LOG_API_KEY'

describe('a secret in an invalid row config', () => {
  it.each([
    ['a schema check quoting it', counterRow(fromTheSecret), undefined, `row "counter" (${fixtures}counter.ts): config.start: expected number but got ***`],
    ['a group member\'s schema check quoting it', ['- id: group', '  name: FIXTURES/group.ts', '  group: true', '  config:', ...counterRow(fromTheSecret).map((line) => `    ${line}`)], undefined,
      `row "counter" (${fixtures}counter.ts): config.start: expected number but got ***`],
    ['a plugin\'s own Config check quoting it (a key read into baseURL)', ['- id: llm', "  name: '@rein/llm'", '- id: openai', "  name: '@rein/llm-openai'", '  config:', `    baseURL: ${fromTheSecret}`], installed.llmOpenai,
      'row "openai" (@rein/llm-openai): config: baseURL "***" has no http:// or https:// scheme; write baseURL: http://***'],
  ])('at the first load, %s, is masked in the log, and the logged error names the row and the field', async (_case, lines, resolveFrom, problem) => {
    const { root, lines: logged } = loggedContext()
    const error = await caught(loadComposition({ file: writeConfig(lines.join('\n')), context: root, ...(resolveFrom ? { resolveFrom } : {}) }))
    expect(error.details?.problems).toEqual([problem])
    expect(logged.map((line) => line.text).join('\n')).not.toMatch(ANY_OF_KEY)
    expect(everythingIn(error)).not.toMatch(ANY_OF_KEY)
    // The loader's own line for the row says what the report says.
    expect(logged.filter((line) => line.type === 'error').map((line) => line.text).join('\n')).toContain(problem)
  })

  it('under headers, when it is no environment value, is not quoted at all as the row starts', async () => {
    const { root, lines: logged } = loggedContext()
    const rows = ['- id: llm', "  name: '@rein/llm'", '- id: openai', "  name: '@rein/llm-openai'", '  config:', '    headers: !!js "({ Authorization: 81726354918273 })"']
    const error = await caught(loadComposition({ file: writeConfig(rows.join('\n')), context: root, resolveFrom: installed.llmOpenai }))
    const problem = 'row "openai" (@rein/llm-openai): config.headers.Authorization: not a value of the type this field takes (not shown: it may be a secret); a key or a header\'s value is text, so quote it'
    expect(error.details?.problems).toEqual([problem])
    expect(`${logged.map((line) => line.text).join('\n')}\n${everythingIn(error)}`).not.toContain('81726354918273')
    expect(logged.filter((line) => line.type === 'error').map((line) => line.text).join('\n')).toContain(problem)
  })

  it('at a reload that adds the row, is masked in the log and in the error', async () => {
    const { root, lines: logged } = loggedContext()
    const file = writeConfig(counterRow('1').join('\n'))
    loaded = await loadComposition({ file, context: root })
    writeConfig([...counterRow('1'), ...counterRow(fromTheSecret, 'second')].join('\n'))
    const error = await caught(loaded.reload())
    const problem = `row "second" (${fixtures}counter.ts): config.start: expected number but got ***`
    expect(error.details?.problems).toEqual([problem])
    expect(logged.map((line) => line.text).join('\n')).not.toMatch(ANY_OF_KEY)
    expect(everythingIn(error)).not.toMatch(ANY_OF_KEY)
    expect(logged.filter((line) => line.type === 'error').map((line) => line.text).join('\n')).toContain(problem)
    expect(loaded.ctx.counter.value).toBe(1)
  })

  it('at a reload that edits a running row, is masked in the error and never logged', async () => {
    const { root, lines: logged } = loggedContext()
    const file = writeConfig(counterRow('1').join('\n'))
    loaded = await loadComposition({ file, context: root })
    writeConfig(counterRow(fromTheSecret).join('\n'))
    const error = await caught(loaded.reload())
    expect(error.details?.problems).toEqual([`row "counter" (${fixtures}counter.ts): config.start: expected number but got ***`])
    expect(logged.map((line) => line.text).join('\n')).not.toMatch(ANY_OF_KEY)
    expect(everythingIn(error)).not.toMatch(ANY_OF_KEY)
  })

  it('pasted in as written is masked in the error and never logged (nothing starts)', async () => {
    const { root, lines: logged } = loggedContext()
    const error = await caught(loadComposition({ file: writeConfig(counterRow(KEY).join('\n')), context: root }))
    expect(error.details?.problems).toEqual([`row "counter" (${fixtures}counter.ts): config.start: expected number but got ***`])
    expect(logged.map((line) => line.text).join('\n')).not.toMatch(ANY_OF_KEY)
    expect(everythingIn(error)).not.toMatch(ANY_OF_KEY)
  })
})

describe('a secret in the error a plugin module throws as it is imported', () => {
  it('is masked in the problem and in the cause, which still says what failed', async () => {
    const { root, lines: logged } = loggedContext()
    const error = await caught(loadComposition({ file: writeConfig(['- id: broken', '  name: FIXTURES/throws-secret-on-import.ts'].join('\n')), context: root }))
    expect(error.details?.problems).toEqual([`row "broken" (${fixtures}throws-secret-on-import.ts): cannot load the plugin: cannot import: no account has the key ***`])
    expect(error.cause).toMatchObject({ name: 'Error', message: 'cannot import: no account has the key ***' })
    expect(everythingIn(error)).not.toMatch(ANY_OF_KEY)
    expect(logged.map((line) => line.text).join('\n')).not.toMatch(ANY_OF_KEY)
  })
})

/** Every own property of every link in the error's cause chain (getters read), as text. */
function everyPropertyIn(error: unknown): string {
  const said: string[] = []
  for (let at: unknown = error; said.length < 400 && at instanceof Error; at = at.cause) {
    for (const name of Object.getOwnPropertyNames(at)) said.push(String(Reflect.get(at, name)))
  }
  return said.join('\n')
}

describe('what review found', () => {
  it('a Standard Schema whose validate throws, quoting a key written in the file, gives a masked problem naming the row', async () => {
    const { root, lines: logged } = loggedContext()
    const rows = ['- id: s', '  name: FIXTURES/standard-throws.ts', '  config:', `    port: ${KEY}`]
    const error = await caught(loadComposition({ file: writeConfig(rows.join('\n')), context: root }))
    expect(error.code).toBe('CONFIG_INVALID')
    expect(error.details?.problems).toEqual([`row "s" (${fixtures}standard-throws.ts): config: port must be a number, got ***`])
    expect(`${logged.map((line) => line.text).join('\n')}\n${everythingIn(error)}`).not.toMatch(ANY_OF_KEY)
  })

  it('a cause holding the secret where inspect does not look is still not kept', async () => {
    const error = await caught(loadComposition({ file: writeConfig(['- id: broken', '  name: FIXTURES/throws-hidden-secret-on-import.ts'].join('\n')) }))
    expect(error.cause).toMatchObject({ message: 'cannot import: the account check failed' })
    expect(everyPropertyIn(error)).not.toMatch(ANY_OF_KEY)
    expect(everyPropertyIn(error)).toContain('the account for *** is closed')
  })

  it('a !!js value holding a cycle starts as it did before compose checked it', async () => {
    const rows = ['- id: any', '  name: FIXTURES/any-value.ts', '  config:', `    extra: !!js "(() => { const o = {}; o.self = o; return o })()"`]
    loaded = await loadComposition({ file: writeConfig(rows.join('\n')) })
    expect(loaded.rows().map((row) => row.id)).toContain('any')
  })

  it.each([
    ['before the row starts', `    apiKey: bad-9f8e7d6c5b4a3210`],
    ['as the row starts (another value is !!js)', `    apiKey: bad-9f8e7d6c5b4a3210\n    extra: !!js "1"`],
  ])('a key written under a secret-named key, quoted by its own check, is masked %s', async (_when, config) => {
    const { root, lines: logged } = loggedContext()
    const error = await caught(loadComposition({ file: writeConfig(['- id: any', '  name: FIXTURES/any-value.ts', '  config:', config].join('\n')), context: root }))
    expect(error.details?.problems).toEqual([`row "any" (${fixtures}any-value.ts): config: invalid API key "***": it starts with pk-`])
    expect(`${logged.map((line) => line.text).join('\n')}\n${everythingIn(error)}`).not.toContain('9f8e7d6c5b4a3210')
  })
})
