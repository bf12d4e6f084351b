import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { isReinError } from '@rein/base'
import { describe, expect, it, vi } from 'vitest'
import { loadComposition, type SlowLoad } from '../src/index.ts'
import { fixtures, rejection, useComposition } from './harness.ts'

const { dir, log, writeConfig, load, failure, dispose } = useComposition()

describe('loadComposition', () => {
  it('loads rows, evaluates !!js values and never writes the file', async () => {
    process.env.REIN_TEST_START = '5'
    const text = [
      '# comment that a writer would drop',
      '- id: counter',
      '  name: FIXTURES/counter.ts',
      '  config:',
      '    start: !!js Number(process.env.REIN_TEST_START)',
      '    label: hits',
      '- id: user',
      '  name: FIXTURES/needs-counter.ts',
      '- id: off',
      '  name: FIXTURES/throws.ts',
      '  disabled: true',
      '',
    ].join('\n')
    const file = writeConfig(text)
    const loaded = await load(file)
    expect(loaded.ctx.counter.value).toBe(5)
    expect(log()).toEqual(['start 5'])
    await dispose()
    expect(log()).toEqual(['start 5', 'stop'])
    expect(readFileSync(file, 'utf8')).toBe(text.replaceAll('FIXTURES/', fixtures))
  })

  it('reloads: removed rows are disposed, added rows start, the file stays as the user wrote it', async () => {
    const file = writeConfig(`- id: counter\n  name: FIXTURES/counter.ts\n  config: {label: a}\n`)
    const loaded = await load(file)
    expect(log()).toEqual([])
    const added = writeConfig(`- id: counter\n  name: FIXTURES/counter.ts\n  config: {label: a}\n- id: user\n  name: FIXTURES/needs-counter.ts\n`)
    await loaded.reload()
    expect(log()).toEqual(['start 0'])
    writeConfig(`- id: counter\n  name: FIXTURES/counter.ts\n  config: {label: a}\n`)
    await loaded.reload()
    expect(log()).toEqual(['start 0', 'stop'])
    expect(added).toBe(file)
  })

  it('keeps the running rows when a reload meets an unreadable file', async () => {
    const file = writeConfig(`- id: counter\n  name: FIXTURES/counter.ts\n  config: {label: a}\n- id: user\n  name: FIXTURES/needs-counter.ts\n`)
    const loaded = await load(file)
    writeConfig('- id: [broken\n')
    await expect(loaded.reload()).rejects.toMatchObject({ code: 'CONFIG_INVALID' })
    expect(loaded.ctx.counter.value).toBe(0)
    expect(log()).toEqual(['start 0'])
  })

  it.each([
    ['throws', `!!js "(() => { throw new Error('nope') })()"`, /row "counter".*nope/],
    ['gives a value of the wrong type', '!!js "12"', /row "counter".*config\.label/],
  ])('refuses a reload whose !!js value %s, and keeps the row running as before', async (_case, value, problem) => {
    const file = writeConfig(`- id: counter\n  name: FIXTURES/counter.ts\n  config: {label: a, start: 3}\n`)
    const loaded = await load(file)
    writeConfig(`- id: counter\n  name: FIXTURES/counter.ts\n  config:\n    start: 4\n    label: ${value}\n`)
    const refused = await rejection(loaded.reload())
    expect(refused).toMatchObject({ code: 'CONFIG_INVALID' })
    expect(refused.message).toMatch(problem)
    expect(loaded.ctx.counter.value).toBe(3)
    expect(file).toBeTruthy()
  })

  it('refuses a reload whose new config fails as the row restarts, once, and puts the old row back', async () => {
    const file = writeConfig(`- id: counter\n  name: FIXTURES/counter.ts\n  config: {label: a, start: 3}\n`)
    const loaded = await load(file)
    writeConfig(`- id: counter\n  name: FIXTURES/counter.ts\n  config: {label: a, start: 5, limit: 4}\n`)
    const refused = await rejection(loaded.reload())
    expect(refused.problems).toEqual([expect.stringMatching(/^row "counter".*start 5 is above the limit 4/)])
    expect(loaded.ctx.counter.value).toBe(3)
  })

  it('names the row and field of an invalid config, and leaves nothing loaded', async () => {
    const file = writeConfig(`- id: counter\n  name: FIXTURES/counter.ts\n  config:\n    start: -1\n- id: user\n  name: FIXTURES/needs-counter.ts\n`)
    const result = await failure(file)
    expect(result.code).toBe('CONFIG_INVALID')
    expect(result.problems).toEqual([
      `row "counter" (${fixtures}counter.ts): config.start: expected number >= 0 but got -1`,
      `row "user" (${fixtures}needs-counter.ts): needs the service "counter" from row "counter" (${fixtures}counter.ts), which is invalid (see its error); fix that row first`,
    ])
    expect(result.message).toContain(`${file} has 2 problems:\n  - row "counter"`)
    expect(log()).toEqual([])
  })

  it('says which row names a package that cannot be found, or a module that is not a plugin, before any row starts', async () => {
    const file = writeConfig([
      '- id: counter', '  name: FIXTURES/counter.ts', '  config: {label: a, start: 1}',
      '- id: ghost', '  name: rein-plugin-that-does-not-exist',
      '- id: plain', '  name: FIXTURES/not-a-plugin.ts',
      '- id: broken', '  name: FIXTURES/throws.ts',
    ].join('\n'))
    const { problems } = await failure(file)
    // "broken" would fail to start, but nothing starts while a row cannot even be imported.
    expect(problems).toEqual([
      expect.stringMatching(/^row "ghost" \(rein-plugin-that-does-not-exist\): cannot load the plugin: Cannot find package 'rein-plugin-that-does-not-exist' .*; is it installed\? npm install rein-plugin-that-does-not-exist in that file's folder$/),
      `row "plain" (${fixtures}not-a-plugin.ts): the module is not a cordis plugin (export a function, a class, or an object with apply)`,
    ])
    expect(log()).toEqual([])
  })

  it('gives the first failed import in the file as the cause, whichever failed first', async () => {
    // The missing package fails at once (resolving); the broken module only once it is read and run.
    const file = writeConfig(['- id: broken', '  name: FIXTURES/throws-on-import.ts', '- id: ghost', '  name: rein-plugin-that-does-not-exist'].join('\n'))
    const { problems, cause } = await failure(file)
    expect(problems).toHaveLength(2)
    expect(cause).toMatchObject({ message: 'cannot import: this module is broken' })
  })

  it('says which row failed to start', async () => {
    const { problems } = await failure(writeConfig('- id: broken\n  name: FIXTURES/throws.ts\n'))
    expect(problems).toEqual([`row "broken" (${fixtures}throws.ts): failed to start: cannot open the database: /nowhere/db.sqlite`])
  })

  it.each([
    ['not YAML', '- id: x\n  name: [unclosed\n', /not valid YAML: /],
    ['not a list', 'id: x\nname: y\n', /the top level must be a list of plugin rows/],
    ['a row without id', '- name: x\n', /row #1: needs an id/],
    ['a row without name', '- id: x\n', /row "x": needs a name/],
    ['a duplicate id', '- {id: x, name: a}\n- {id: x, name: b}\n', /row "x": the id is used by another row/],
    ['a misspelt field', '- {id: x, name: a, configs: {}}\n', /row "x": unknown field "configs"/],
    ['a group without rows', '- {id: g, name: group, group: true, config: {}}\n', /row "g": a group's config must be a list of rows/],
    ['disabled written as text (it read as true)', '- {id: x, name: a, disabled: "false"}\n', /row "x": disabled must be true or false/],
    ['disabled written as no', '- {id: x, name: a, disabled: no}\n', /row "x": disabled must be true or false/],
    ['inject that is neither a list nor a mapping', '- {id: x, name: a, inject: foo}\n', /row "x": inject must be a list of service names/],
    ['intercept that is not a mapping', '- {id: x, name: a, intercept: x}\n', /row "x": intercept must be a mapping/],
    ['inject as a !!js expression (the loader never evaluates it)', '- id: x\n  name: a\n  inject: !!js "[\'tools\']"\n', /row "x": inject cannot hold a !!js expression/],
    ['isolate as a !!js expression', '- id: x\n  name: a\n  isolate: !!js "({})"\n', /row "x": isolate cannot hold a !!js expression/],
    ['a !!js expression inside intercept', '- id: x\n  name: a\n  intercept: {logger: !!js "({})"}\n', /row "x": intercept cannot hold a !!js expression/],
    ['inject listing something other than names', '- id: x\n  name: a\n  inject: [tools, 3]\n', /row "x": inject must list service names/],
  ])('rejects %s before loading anything', async (_label, text, pattern) => {
    const result = await failure(writeConfig(text))
    expect(result.code).toBe('CONFIG_INVALID')
    expect(result.message).toMatch(pattern)
  })

  it('loads a row whose disabled or inject is left empty (null), as unset', async () => {
    const file = writeConfig('- id: counter\n  name: FIXTURES/counter.ts\n  disabled:\n  inject:\n  config: {label: a}\n')
    expect((await load(file)).ctx.counter.value).toBe(0)
  })

  it('reports a missing file as CONFIG_NOT_FOUND', async () => {
    expect((await failure(join(dir(), 'absent.yml'))).code).toBe('CONFIG_NOT_FOUND')
  })

  it('gives the line and column of a syntax error in a JSON composition, not a character offset', async () => {
    const text = ['[', '  {"id": "counter", "name": "x"},', '  {"id": "tools" "name": "y"}', ']', ''].join('\n')
    const { problems } = await failure(writeConfig(text, 'cordis.json'))
    expect(problems).toEqual([`not valid JSON: Expected ',' or '}' after property value at line 3, column 18`])
  })

  it.each([
    ['a trailing comma', ['[', '  {"id": "a", "name": "x", "key": "sk-secret"},', ']', ''], `Unexpected token ']' at line 3, column 1`],
    ['an unquoted value', ['[', '  {"id": "a", "name": x}', ']', ''], `Unexpected token 'x' at line 2, column 23`],
  ])('places %s in a JSON composition by line and column, without quoting the file', async (_case, lines, said) => {
    const { problems } = await failure(writeConfig(lines.join('\n'), 'cordis.json'))
    expect(problems).toEqual([`not valid JSON: ${said}`])
  })

  // js-yaml's message carries a code frame of the lines around the error, and its error (the
  // cause) the whole file: a key under a header, a line above or on the error, would be printed.
  it.each([
    ['on a neighbouring line', ['    headers:', '      api-key: S3cr3tV4lue9', '    label: [oops'], 'missed comma between flow collection entries at line 7, column 1'],
    ['on the error line', ['    api-key: S3cr3tV4lue9: x'], 'bad indentation of a mapping entry at line 4, column 26'],
    ['read as a tag (a value starting with !)', ['    api-key: !S3cr3tV4lue9'], 'unknown tag: a value starting with ! is read as a YAML tag; quote the value at line 5, column 1'],
    ['read as a tag with !! (a value starting with !!)', ['    api-key: !!S3cr3tV4lue9'], 'unknown tag: a value starting with ! is read as a YAML tag; quote the value at line 5, column 1'],
    ['read as an alias (a value starting with *)', ['    api-key: *S3cr3tV4lue9'], 'unknown alias: a value starting with * is read as a YAML alias; quote the value at line 4, column 27'],
    ['read as a tag handle (!x!…)', ['    api-key: !x!S3cr3tV4lue9'], 'malformed tag: a value starting with ! is read as a YAML tag; quote the value at line 4, column 29'],
  ])('does not quote a secret %s in a YAML syntax error, nor keep it in the cause', async (_case, configLines, said) => {
    const file = writeConfig(['- id: openai', '  name: x', '  config:', ...configLines, '- id: tools', '  name: y', ''].join('\n'))
    const error = await loadComposition({ file }).then(() => undefined, (caught: unknown) => caught)
    expect(inspect(error, { depth: 10 })).not.toContain('S3cr3tV4lue9')
    expect(isReinError(error) && error.details?.problems).toEqual([`not valid YAML: ${said}`])
  })

  it.each([
    ['a list', "!!js ['write']"],
    ['a mapping', '!!js { a: 1 }'],
  ])('says !!js takes its expression quoted, not to quote the value, when %s follows it', async (_case, value) => {
    const { problems } = await failure(writeConfig(`- id: tools\n  name: x\n  config:\n    askFor: ${value}\n`))
    expect(problems).toEqual([expect.stringMatching(/^not valid YAML: !!js is followed by a list or a mapping, but it takes its expression as text: quote the expression after the tag \(!!js "\['write'\]"\) at line 4, column \d+$/)])
  })

  it.each([
    ['an unclosed quote', "- id: a\n  name: 'x\n", 'single quoted scalar', 2],
    ['an unclosed quote with no newline after it', '- id: a\n  name: "x', 'double quoted scalar', 2],
    ['an unclosed bracket', '- id: a\n  name: x\n  inject: [llm,\n    tools\n', 'flow collection', 3],
    ['an unclosed quote after a quoted value that spans lines', '- id: llm\n  name: x\n  config:\n    system: "You are\n      a helper"\n- id: agents\n  name: y\n  config:\n    model: "gpt\n', 'double quoted scalar', 9],
    ['an unclosed quote inside an unclosed bracket', '- id: a\n  name: x\n  inject: [llm,\n    "tools\n', 'double quoted scalar', 4],
  ])('reports %s at the end of the file at a line the file has, and where it opens', async (_case, text, within, opens) => {
    const { problems } = await failure(writeConfig(text))
    const last = text.replace(/\n$/, '').split('\n').length
    expect(problems).toEqual([`not valid YAML: unexpected end of the stream within a ${within} at the end of the file (line ${last} is its last): it opens at line ${opens} and is never closed`])
  })

  it('does not keep the quote of the file in a JSON syntax error\'s cause', async () => {
    // Node 20 words an unquoted value with a quote of the ten characters either side of it.
    const file = writeConfig(['[', '  {"id": "a", "name": "x", "config": {"apiKey": S3cr3tV4lue9}}', ']', ''].join('\n'), 'cordis.json')
    const error = await loadComposition({ file }).then(() => undefined, (caught: unknown) => caught)
    expect(isReinError(error) && error.details?.problems).toEqual([`not valid JSON: Unexpected token 'S' at line 2, column 49`])
    expect(inspect(error, { depth: 10 })).not.toContain('3cr3tV')
  })

  it('names the config field whose !!js expression throws as the row first starts', async () => {
    const file = writeConfig([
      '- id: counter',
      '  name: FIXTURES/counter.ts',
      '  config:',
      '    start: 1',
      `    label: !!js "(() => { throw new Error('no label today') })()"`,
    ].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([`row "counter" (${fixtures}counter.ts): config.label: the !!js expression threw: no label today`])
  })

  it('names the row whose disabled !!js expression throws, with what it threw, rather than pointing at a log', async () => {
    const file = writeConfig([
      '- id: counter',
      '  name: FIXTURES/counter.ts',
      `  disabled: !!js "(() => { throw new Error('no flag') })()"`,
      '  config: {label: a}',
    ].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([`row "counter" (${fixtures}counter.ts): disabled: the !!js expression threw: no flag`])
  })

  it('says a group row\'s disabled !!js that throws is the group\'s, on each of its rows, not theirs', async () => {
    const file = writeConfig([
      '- id: grp',
      "  name: 'cordis:group'",
      '  group: true',
      `  disabled: !!js "(() => { throw new Error('no flag') })()"`,
      '  config:',
      '    - id: counter',
      '      name: FIXTURES/counter.ts',
      '      config: {label: a}',
    ].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([`row "counter" (${fixtures}counter.ts): disabled, its group row's: the !!js expression threw: no flag`])
  })

  it('names the row still starting when told the load has stalled, instead of waiting forever', async () => {
    // One row: a second row's import could still be under way when the test says "stalled", which a
    // real stall (nothing left to run) rules out. @rein/cli's tests, in a real process, add a row waiting for it.
    const file = writeConfig(['- id: stuck', '  name: FIXTURES/hangs.ts'].join('\n'))
    const started = new Promise<void>((resolve) => { (globalThis as Record<string, unknown>).composeStarted = resolve })
    const stalled = new AbortController()
    const loading = failure(file, { stalled: stalled.signal })
    await started
    stalled.abort()
    const { code, problems } = await loading
    expect(code).toBe('CONFIG_INVALID')
    expect(problems).toEqual([
      `row "stuck" (${fixtures}hangs.ts): never finished starting — its apply awaits something that can never settle; fix the plugin, or disable the row`,
    ])
  })

  it('tells onSlow once which row a load still waits for after slowAfterMs, and goes on waiting', async () => {
    const file = writeConfig(['- id: stuck', '  name: FIXTURES/hangs.ts'].join('\n'))
    const started = new Promise<void>((resolve) => { (globalThis as Record<string, unknown>).composeStarted = resolve })
    const told: SlowLoad[] = []
    let tell = () => {}
    const toldOnce = new Promise<void>((resolve) => { tell = resolve })
    const stalled = new AbortController()
    const loading = failure(file, { stalled: stalled.signal, slowAfterMs: 1, onSlow: (slow) => { told.push(slow); tell() } })
    await Promise.all([started, toldOnce])
    // After 1 ms the row's module may still be importing, or its apply running: either way it is named.
    expect(told).toEqual([{ step: expect.stringMatching(/^(import|start)$/), rows: [`row "stuck" (${fixtures}hangs.ts)`] }])
    // Nothing would ever settle this load: it ends as a stalled one.
    stalled.abort()
    expect(await loading).toMatchObject({ code: 'CONFIG_INVALID' })
    expect(told).toHaveLength(1)
  })

  it('clears its unref\'d slow-load timer when the load settles: onSlow never comes, and the timer never holds the process', async () => {
    const file = writeConfig(['- id: counter', '  name: FIXTURES/counter.ts', '  config: {label: a}'].join('\n'))
    // A delay no other timer uses, to find this one among them.
    const delay = 86_400_123
    const setTimer = vi.spyOn(globalThis, 'setTimeout')
    const clearTimer = vi.spyOn(globalThis, 'clearTimeout')
    const onSlow = vi.fn<(slow: SlowLoad) => void>()
    // Restoring a spy forgets its calls: they are checked first.
    try {
      await load(file, { onSlow, slowAfterMs: delay })
      const index = setTimer.mock.calls.findIndex(([, ms]) => ms === delay)
      const timer = setTimer.mock.results[index]?.value
      expect(timer?.hasRef()).toBe(false)
      expect(clearTimer).toHaveBeenCalledWith(timer)
    } finally {
      setTimer.mockRestore()
      clearTimer.mockRestore()
    }
    expect(onSlow).not.toHaveBeenCalled()
  })

  it('reads JSON compositions too', async () => {
    const file = writeConfig(JSON.stringify([{ id: 'counter', name: `${fixtures}counter.ts`, config: { label: 'j', start: 2 } }]), 'cordis.json')
    expect((await load(file)).ctx.counter.value).toBe(2)
  })

  it('reads a JSON composition saved with a byte order mark (as Windows editors save), not failing at line 1, column 1', async () => {
    const text = `\uFEFF${JSON.stringify([{ id: 'counter', name: `${fixtures}counter.ts`, config: { label: 'j', start: 3 } }])}\r\n`
    expect((await load(writeConfig(text, 'cordis.json'))).ctx.counter.value).toBe(3)
  })
})

describe('the check once every row has started', () => {
  const rows = (wants: string) => ['- id: counter', '  name: FIXTURES/counter.ts', '  config: {label: a}', '- id: check', '  name: FIXTURES/checks.ts', `  config: {wants: ${wants}}`].join('\n')

  it('fails the load with each problem a compose/check listener found', async () => {
    const result = await failure(writeConfig(rows('clock')))
    expect(result).toMatchObject({ code: 'CONFIG_INVALID', problems: ['checks: config.wants names "clock", which no row provides'] })
  })

  it('loads when the listeners find nothing wrong, and refuses a reload they find wrong, keeping the rows as they ran', async () => {
    const file = writeConfig(rows('counter'))
    const composition = await load(file)
    writeConfig(rows('clock'))
    const result = await rejection(composition.reload())
    expect(result.problems).toEqual(['checks: config.wants names "clock", which no row provides'])
    expect(composition.rows().find((row) => row.id === 'check')?.config).toEqual({ wants: 'counter' })
  })
})
