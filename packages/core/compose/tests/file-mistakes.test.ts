// A file as an editor, a shell or a hurried user leaves it: another encoding, a folder, nothing in it,
// a variable written the way a shell or docker-compose reads one, a key typed in. Each is refused
// saying what to do, or loads as written.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fixtures, installed, useComposition } from './harness.ts'

const { dir, writeConfig, load, failure } = useComposition()

const counter = (label: string) => `- id: c\n  name: ${fixtures}counter.ts\n  config: {label: ${label}}\n`

function writeBytes(bytes: Buffer, name = 'cordis.yml'): string {
  const file = join(dir(), name)
  writeFileSync(file, bytes)
  return file
}

describe('a file in another encoding', () => {
  it.each([
    ['cordis.yml'],
    ['cordis.json'],
  ])('refuses a %s saved in Latin-1 rather than loading its text with replacement characters', async (name) => {
    const text = name.endsWith('.json')
      ? `[{"id":"c","name":"${fixtures}counter.ts","config":{"label":"café"}}]`
      : `${counter('a')}- id: d\n  name: ${fixtures}recorder.ts\n  config: {name: café}\n`
    const { code, problems } = await failure(writeBytes(Buffer.from(text, 'latin1'), name))
    expect(code).toBe('CONFIG_INVALID')
    // The é itself: a Latin-1 accented letter is a UTF-8 lead byte, so the prefix ending on it still decodes as a stream.
    const at = name.endsWith('.json') ? `line 1, column ${text.indexOf('é') + 1}` : 'line 6, column 21'
    expect(problems).toEqual([`not UTF-8 text: the bytes at ${at} are not UTF-8; save the file as UTF-8`])
  })

  it.each([
    ['an accented letter that ends its line (not the newline after it)', `${counter('a')}# written by René\n`, 'line 4, column 17'],
    ['an accented letter that ends the file', `${counter('a')}# written by René`, 'line 4, column 17'],
    ['a byte that can only continue a character (Latin-1 ©)', `${counter('a')}# © 2026\n`, 'line 4, column 3'],
    ['an accented letter after UTF-8 text beyond ASCII on its line (columns count characters)', null, 'line 4, column 5'],
  ])('says where a Latin-1 byte is for %s', async (_label, text, at) => {
    const bytes = text === null
      ? Buffer.concat([Buffer.from(`${counter('a')}# ✓ `), Buffer.from('é ok\n', 'latin1')])
      : Buffer.from(text, 'latin1')
    const { problems } = await failure(writeBytes(bytes))
    expect(problems).toEqual([`not UTF-8 text: the bytes at ${at} are not UTF-8; save the file as UTF-8`])
  })

  it.each([
    ['UTF-16 with its byte order mark (little-endian)', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(counter('a'), 'utf16le')])],
    ['UTF-16 with its byte order mark (big-endian)', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(counter('a'), 'utf16le').swap16()])],
    ['UTF-16 without a byte order mark', Buffer.from(counter('a'), 'utf16le')],
  ])('says a file saved as %s must be saved as UTF-8, rather than that it holds a null byte', async (_label, bytes) => {
    const { code, problems } = await failure(writeBytes(bytes))
    expect(code).toBe('CONFIG_INVALID')
    expect(problems).toEqual(['saved as UTF-16 (as Windows PowerShell\'s > and Notepad\'s "Unicode" write it): save the file as UTF-8'])
  })

  it('loads a file with Windows line endings, a byte order mark and text beyond ASCII as written', async () => {
    const composition = await load(writeBytes(Buffer.from(`\uFEFF${counter('"café ✓"')}`.replaceAll('\n', '\r\n'))))
    expect(composition.ctx.counter.config.label).toBe('café ✓')
  })
})

describe('a path that is not a composition file', () => {
  it('says a folder given as the file is a folder and names the file to give, rather than EISDIR', async () => {
    const folder = join(dir(), 'agent')
    mkdirSync(folder)
    const { code, message } = await failure(folder)
    expect(code).toBe('CONFIG_INVALID')
    expect(message).toBe(`${folder} is a folder, not a composition file: name the cordis.yml inside it (${join(folder, 'cordis.yml')})`)
  })

  it.each([
    ['empty', ''],
    ['blank', '\n\n  \n'],
    ['only comments', '# - id: tools\n#   name: \'@rein/tools\'\n'],
  ])('says a file that is %s has no rows, rather than that its top level is not a list', async (_label, text) => {
    const { problems } = await failure(writeConfig(text))
    expect(problems).toEqual(['the file has no rows: list the plugin rows (- id: …, name: …), one per plugin'])
  })
})

describe('a variable written as a shell reads one', () => {
  it.each([
    ['${CLOCK_LABEL}', 'CLOCK_LABEL'],
    ['$CLOCK_LABEL', 'CLOCK_LABEL'],
    ['"${CLOCK_LABEL}"', 'CLOCK_LABEL'],
  ])('refuses %s rather than passing the text itself to the plugin', async (written, name) => {
    // Block style: unquoted inside a flow mapping ({label: ${X}}), the braces already fail as YAML.
    const { code, problems } = await failure(writeConfig(`- id: c\n  name: ${fixtures}counter.ts\n  config:\n    label: ${written}\n`))
    expect(code).toBe('CONFIG_INVALID')
    expect(problems).toEqual([`row "c" (${fixtures}counter.ts): config.label: ${written.replaceAll('"', '')} is not read as an environment variable (a cordis.yml substitutes none): write !!js process.env.${name}, or the value itself`])
  })

  it('leaves a variable inside longer text alone: it may be meant for the plugin (a prompt, a shell line)', async () => {
    const composition = await load(writeConfig(counter('"echo ${HOME}"')))
    expect(composition.ctx.counter.config.label).toBe('echo ${HOME}')
  })

  it('a reload does not refuse a !!js value that gives $CLOCK_LABEL, as the load that started the row did not', async () => {
    const row = (start: number) => `- id: c\n  name: ${fixtures}counter.ts\n  config:\n    start: ${start}\n    label: !!js "'$CLOCK_LABEL'"\n`
    const composition = await load(writeConfig(row(0)))
    expect(composition.ctx.counter.config.label).toBe('$CLOCK_LABEL')
    writeConfig(row(1))
    await composition.reload()
    expect(composition.ctx.counter.config).toMatchObject({ start: 1, label: '$CLOCK_LABEL' })
  })
})

describe('a key typed into the file', () => {
  it.each([['apiKey'], ['api_key']])('says %s goes in an environment variable named by apiKeyEnv, and never quotes it', async (field) => {
    const key = 'sk-proj-Zq8vT3nWc1LmR5yH0pK7dJ2a'
    const file = writeConfig(`- id: openai\n  name: '@rein/llm-openai'\n  config:\n    ${field}: ${key}\n`)
    const { code, message, problems } = await failure(file, { resolveFrom: installed.llmOpenai })
    expect(code).toBe('CONFIG_INVALID')
    expect(problems).toContain(`row "openai" (@rein/llm-openai): config.${field}: unknown key; rein does not read a secret from the file: put it in an environment variable and set apiKeyEnv to that variable's name`)
    expect(message).not.toContain(key)
  })
})
