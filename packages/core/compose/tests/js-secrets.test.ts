// A `!!js` value is code the user wrote, and a key pasted into it (instead of its variable's name)
// must not come back in an error or a log line: neither quoted from the expression, nor in the
// message of what it threw (a ReferenceError names the bare word, a SyntaxError the token, and
// JSON.parse quotes the text it parsed, which may be a key from the environment).
import { inspect } from 'node:util'
import { Context } from '@deepseek-ai/cordis'
import { isReinError } from '@rein/base'
import { afterEach, describe, expect, it } from 'vitest'
import { loadComposition } from '../src/index.ts'
import { fixtures, useComposition } from './harness.ts'

const { writeConfig, load } = useComposition()

const KEY = 'AbC123XyZ987qweRty'
/** Any part of the key: a message may quote only its first characters (JSON.parse does). */
const ANY_OF_KEY = /AbC123|XyZ987|qweRty/

afterEach(() => {
  delete process.env.REIN_TEST_JS_KEY
})

/** Everything a failed load says, anywhere: message, details, the whole cause chain (inspect follows `cause`) and the context's log lines. */
function everythingSaid(error: unknown, root: Context): string {
  const causes: unknown[] = []
  for (let at: unknown = error; at instanceof Error && causes.length < 10; at = at.cause) causes.push(at, String(at.message))
  const logs = root.logger.buffer.map((line) => inspect(line.args, { depth: 10 }))
  return [inspect(error, { depth: 10 }), ...causes.map((value) => inspect(value, { depth: 10 })), ...logs].join('\n')
}

async function loadFailure(lines: string[]) {
  const root = new Context()
  const file = writeConfig(lines.join('\n'))
  const error = await loadComposition({ file, context: root }).then(() => undefined, (caught: unknown) => caught)
  if (!isReinError(error)) throw new Error(`expected a ReinError, got ${String(error)}`)
  return { error, said: everythingSaid(error, root) }
}

const counter = (field: string) => ['- id: counter', '  name: FIXTURES/counter.ts', '  config:', '    start: 1', `    ${field}`]

describe('a !!js expression that throws, holding a key', () => {
  it.each([
    ['a key pasted as a bare word (ReferenceError names it)', `label: !!js sk_live_${KEY}`, 'a ReferenceError: ', 'it names a variable that is not defined'],
    ['a key pasted unquoted with a space (SyntaxError quotes the token)', `label: !!js sk-proj ${KEY}`, 'a SyntaxError: ', 'it is not valid JavaScript'],
    ['a key read as a property (TypeError quotes the name)', `label: !!js "({}).missing.${KEY}"`, 'a TypeError: ', 'it used a value of the wrong type'],
    ['a key from the environment JSON.parse quotes', 'label: !!js JSON.parse(process.env.REIN_TEST_JS_KEY)', 'a SyntaxError: ', ''],
  ])('%s: the problem names the field and the kind, and no text of the expression or of what it threw', async (_case, field, threw, hint) => {
    process.env.REIN_TEST_JS_KEY = `sk-${KEY}`
    const { error, said } = await loadFailure(counter(field))
    expect(error.code).toBe('CONFIG_INVALID')
    const [problem = ''] = (error.details?.problems ?? []) as string[]
    expect(problem.startsWith(`row "counter" (${fixtures}counter.ts): config.label: the !!js expression threw ${threw}`)).toBe(true)
    expect(problem).toContain(hint)
    expect(said).not.toMatch(ANY_OF_KEY)
  })

  it('an Error the expression throws on purpose says its message, with secret-named environment values masked', async () => {
    process.env.REIN_TEST_JS_KEY = `sk-${KEY}`
    const { error, said } = await loadFailure(counter(`label: !!js "(() => { throw new Error('LABEL is not set (key ' + process.env.REIN_TEST_JS_KEY + ')') })()"`))
    expect(error.details?.problems).toEqual([`row "counter" (${fixtures}counter.ts): config.label: the !!js expression threw: LABEL is not set (key ***)`])
    expect(said).not.toMatch(ANY_OF_KEY)
  })

  it('a secret-named environment value a !!js reads is masked where a schema check quotes it, and a short one breaks no longer one', async () => {
    process.env.REIN_TEST_JS_KEY = `sk-${KEY}`
    process.env.REIN_TEST_JS_SHORT_TOKEN = '1'
    try {
      const { error } = await loadFailure(counter('label: a').slice(0, 3).concat(['    label: a', '    start: !!js process.env.REIN_TEST_JS_KEY']))
      expect(error.details?.problems).toEqual([expect.stringContaining('config.start: expected number but got ***')])
      expect(`${error.message}\n${String(error.details?.problems)}`).not.toMatch(ANY_OF_KEY)
    } finally {
      delete process.env.REIN_TEST_JS_SHORT_TOKEN
    }
  })

  it('a disabled: !!js that throws names the field and the kind, and not the key', async () => {
    const { error, said } = await loadFailure(['- id: counter', '  name: FIXTURES/counter.ts', `  disabled: !!js sk_live_${KEY}`, '  config: {label: a}'])
    expect(error.details?.problems).toEqual([
      `row "counter" (${fixtures}counter.ts): disabled: the !!js expression threw a ReferenceError: it names a variable that is not defined (a bare word is read as one: quote text, and read the environment as process.env.NAME); what it threw is not shown, as it may quote the expression or a secret`,
    ])
    expect(said).not.toMatch(ANY_OF_KEY)
  })

  it('a reload whose edited config holds a throwing !!js names the field and not the key', async () => {
    const file = writeConfig(counter('label: a').join('\n'))
    const loaded = await load(file)
    writeConfig(counter(`label: !!js sk_live_${KEY}`).join('\n'))
    const error = await loaded.reload().then(() => undefined, (caught: unknown) => caught)
    expect(isReinError(error) && error.details?.problems).toEqual([expect.stringContaining('config.label: the !!js expression threw a ReferenceError')])
    expect(everythingSaid(error, loaded.ctx)).not.toMatch(ANY_OF_KEY)
  })
})

describe('a !!js expression that throws something that is not an Error', () => {
  it('a throw of null is named as the field\'s failure, not as waiting for a service', async () => {
    const { error } = await loadFailure(counter(`label: !!js "(() => { throw null })()"`))
    expect(error.details?.problems).toEqual([
      `row "counter" (${fixtures}counter.ts): config.label: the !!js expression threw null; what it threw is not shown, as it may quote the expression or a secret`,
    ])
  })
})
