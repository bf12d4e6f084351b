import { appendFile, readFile, stat, truncate, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { SessionEvent } from '@rein/session'
import { describe, expect, it } from 'vitest'
import { JsonlSessionStore } from '../src/index.ts'
import { event, header, range, userMessage } from './fixtures/sessions.ts'
import { tempRoot } from './temp-root.ts'

const headerText = (id: string, overrides = {}) => JSON.stringify({ kind: 'rein-session', ...header(id), ...overrides })
const fileOf = (lines: string[]) => lines.map((line) => `${line}\n`).join('')
const eventText = (item: SessionEvent) => JSON.stringify(item)

async function storeWith(id: string, content: string) {
  const root = await tempRoot()
  await writeFile(join(root, `${id}.jsonl`), content)
  return { root, file: join(root, `${id}.jsonl`), store: new JsonlSessionStore({ root }) }
}

describe('torn final line', () => {
  const torn = '{"seq":2,"type":"step/start","ti'

  it('is dropped on load, and load leaves the file as it is', async () => {
    const { file, store } = await storeWith('s1', fileOf([headerText('s1'), ...range(0, 2).map(eventText)]) + torn)
    const before = await readFile(file, 'utf8')
    expect(await store.load('s1')).toEqual({ header: header('s1'), events: range(0, 2) })
    expect(await readFile(file, 'utf8')).toBe(before)
  })

  it('is cut by open, which says how many bytes it cut, and later appends land on clean lines', async () => {
    const whole = fileOf([headerText('s1'), ...range(0, 2).map(eventText)])
    const { file, store } = await storeWith('s1', whole + torn)
    expect(await store.open('s1')).toMatchObject({ events: range(0, 2), tornBytes: torn.length })
    expect(await readFile(file, 'utf8')).toBe(whole)
    await store.append('s1', range(2, 4))
    await store.close('s1')
    expect(await readFile(file, 'utf8')).toBe(whole + fileOf(range(2, 4).map(eventText)))
    expect((await store.load('s1')).events).toEqual(range(0, 4))
  })

  it('keeps a whole last event that lacks its newline, and open ends the line before appending', async () => {
    const whole = fileOf([headerText('s1'), eventText(event(0))]) + eventText(event(1))
    const { file, store } = await storeWith('s1', whole)
    expect((await store.load('s1')).events).toEqual(range(0, 2))
    expect((await store.open('s1')).events).toEqual(range(0, 2))
    await store.append('s1', range(2, 3))
    await store.close('s1')
    expect(await readFile(file, 'utf8')).toBe(`${whole}\n${eventText(event(2))}\n`)
  })

  it('is only ever the last line: the same bytes mid-file are corruption', async () => {
    const { file, store } = await storeWith('s1', fileOf([headerText('s1'), eventText(event(0)), torn, eventText(event(1))]))
    await expect(store.load('s1')).rejects.toMatchObject({ code: 'SESSION_CORRUPT', details: { file, line: 3 } })
  })
})

describe('text outside ASCII', () => {
  const texts = ['café — naïve', '日本語のテキスト', 'emoji 😀 and \u2028 line separator', 'Latin-1 range: ÿ þ ß']

  it('reads back exactly what was appended, after open, append and load', async () => {
    const { store } = await storeWith('s1', fileOf([headerText('s1')]))
    await store.open('s1')
    const appended = texts.map((text, seq) => userMessage(seq, text))
    await store.append('s1', appended)
    await store.close('s1')
    expect((await store.load('s1')).events).toEqual(appended)
  })

  it('cuts a torn line that ends inside a multi-byte character where the line began', async () => {
    const whole = fileOf([headerText('s1'), eventText(userMessage(0, texts[1]!))])
    const torn = Buffer.from(eventText(userMessage(1, '😀 torn')))
    const { file, store } = await storeWith('s1', whole)
    // The cut falls inside the emoji's four bytes: the tail is not valid UTF-8.
    await appendFile(file, torn.subarray(0, torn.indexOf(0xf0) + 2))
    expect((await store.open('s1')).events).toEqual([userMessage(0, texts[1]!)])
    expect(await readFile(file)).toEqual(Buffer.from(whole))
    await store.append('s1', [userMessage(1, texts[2]!)])
    await store.close('s1')
    expect((await store.load('s1')).events).toEqual([userMessage(0, texts[1]!), userMessage(1, texts[2]!)])
  })
})

describe('malformed files', () => {
  it.each<[string, string[], number, Record<string, unknown>?]>([
    ['an unparsable middle line', [eventText(event(0)), 'not json', eventText(event(1))], 3],
    // A blank line is no event (see 'blank lines'), but a line of anything else is corruption.
    ['a line of zero bytes', [eventText(event(0)), '\0', eventText(event(1))], 3],
    ['a gap in seq', [eventText(event(0)), eventText(event(2))], 3],
    ['a seq not starting at 0', [eventText(event(1))], 2],
    ['an event without data', [eventText(event(0)), JSON.stringify({ seq: 1, type: 'x', time: 't' })], 3],
    ['an event without type', [JSON.stringify({ seq: 0, time: 't', data: null })], 2],
    ['an event without time', [JSON.stringify({ seq: 0, type: 'x', data: null })], 2],
    ['an event without seq', [JSON.stringify({ type: 'x', time: 't', data: null })], 2],
    ['an event that is not an object', ['[1,2]'], 2],
    ['a header for another id', [], 1, { id: 'other' }],
    ['a header without cwd', [], 1, { cwd: undefined }],
  ])('reports %s as SESSION_CORRUPT with the file and line', async (_case, body, line, headerOverrides = {}) => {
    const { file, store } = await storeWith('s1', fileOf([headerText('s1', headerOverrides), ...body]))
    const error = await store.load('s1').catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'SESSION_CORRUPT', details: { file, line } })
    expect((error as Error).message).toContain(`${file}:${line}:`)
  })

  it.each([
    ['a JSON object without the rein kind', '{"hello":"world"}\n'],
    ['plain text', 'hello world\n'],
    ['an empty file', ''],
  ])('reports %s as not a rein session file', async (_case, content) => {
    const { store } = await storeWith('s1', content)
    const error = await store.load('s1').catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'SESSION_CORRUPT', details: { line: 1 } })
    expect((error as Error).message).toContain('not a rein session file')
  })

  it('reports the first bad line in the file, whatever is wrong with the later ones', async () => {
    const { file, store } = await storeWith('s1', fileOf([headerText('s1'), eventText(event(0)), eventText(event(5)), 'not json']))
    await expect(store.load('s1')).rejects.toMatchObject({ code: 'SESSION_CORRUPT', details: { file, line: 3 } })
    const newer = await storeWith('s2', fileOf([headerText('s2', { formatVersion: 99 }), 'not json']))
    await expect(newer.store.load('s2')).rejects.toMatchObject({ code: 'SESSION_FORMAT_UNSUPPORTED' })
  })

  it('numbers a bad last event that lacks its newline by its line', async () => {
    const { file, store } = await storeWith('s1', fileOf([headerText('s1'), eventText(event(0))]) + eventText(event(7)))
    await expect(store.load('s1')).rejects.toMatchObject({ code: 'SESSION_CORRUPT', details: { file, line: 3 } })
  })

  it('refuses a newer format version and says to upgrade', async () => {
    const { store } = await storeWith('s1', fileOf([headerText('s1', { formatVersion: 99 }), eventText(event(0))]))
    const error = await store.load('s1').catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'SESSION_FORMAT_UNSUPPORTED', details: { formatVersion: 99, supported: 1 } })
    expect((error as Error).message).toContain('upgrade rein')
  })

  it('refuses to open a corrupt file, leaving it and its lock untouched', async () => {
    const content = fileOf([headerText('s1'), 'garbage', eventText(event(0))])
    const { root, file, store } = await storeWith('s1', content)
    await expect(store.open('s1')).rejects.toMatchObject({ code: 'SESSION_CORRUPT' })
    expect(await readFile(file, 'utf8')).toBe(content)
    await expect(stat(join(root, 's1.lock'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('keeps extra event fields such as ignorable', async () => {
    const extra = { ...event(0, 'plugin/note'), ignorable: true as const }
    const { store } = await storeWith('s1', fileOf([headerText('s1'), eventText(extra)]))
    expect((await store.load('s1')).events).toEqual([extra])
  })

  it('reads a header without its newline as an empty session, and open ends the line', async () => {
    const { file, store } = await storeWith('s1', headerText('s1'))
    expect(await store.load('s1')).toEqual({ header: header('s1'), events: [] })
    expect((await store.open('s1')).events).toEqual([])
    await store.append('s1', range(0, 1))
    await store.close('s1')
    expect(await readFile(file, 'utf8')).toBe(fileOf([headerText('s1'), eventText(event(0))]))
  })

  it('reads a file whose lines end with CRLF', async () => {
    const { store } = await storeWith('s1', [headerText('s1'), eventText(event(0))].map((line) => `${line}\r\n`).join(''))
    expect(await store.load('s1')).toEqual({ header: header('s1'), events: [event(0)] })
  })

  it('reads a log an editor saved with a byte-order mark, and open appends after it', async () => {
    const content = `\uFEFF${fileOf([headerText('s1'), eventText(event(0))])}`
    const { file, store } = await storeWith('s1', content)
    expect(await store.load('s1')).toEqual({ header: header('s1'), events: [event(0)] })
    expect((await store.open('s1')).events).toEqual([event(0)])
    await store.append('s1', range(1, 2))
    await store.close('s1')
    expect(await readFile(file, 'utf8')).toBe(`${content}${eventText(event(1))}\n`)
    const torn = await storeWith('s2', `\uFEFF${fileOf([headerText('s2')])}{"seq":0`)
    expect((await torn.store.open('s2')).events).toEqual([])
    await torn.store.close('s2')
    expect(await readFile(torn.file, 'utf8')).toBe(`\uFEFF${fileOf([headerText('s2')])}`)
  })

  it('reads a header-only file as an empty session', async () => {
    const { store } = await storeWith('s1', fileOf([headerText('s1')]))
    expect(await store.load('s1')).toEqual({ header: header('s1'), events: [] })
  })

  it('appends after a file that ends with a torn line only after open trims it', async () => {
    const { file, store } = await storeWith('s1', fileOf([headerText('s1')]))
    await appendFile(file, '{"seq":0')
    await store.open('s1')
    await store.append('s1', range(0, 1))
    await store.close('s1')
    expect(await readFile(file, 'utf8')).toBe(fileOf([headerText('s1'), eventText(event(0))]))
  })
})

describe('blank lines', () => {
  const whole = fileOf([headerText('s1'), ...range(0, 2).map(eventText)])

  it('reads a log ending with a blank line (an editor\'s extra newline) as its events, by load, open and list alike, and appends after it', async () => {
    const { file, store } = await storeWith('s1', `${whole}\n`)
    expect(await store.load('s1')).toEqual({ header: header('s1'), events: range(0, 2) })
    expect((await store.list()).map((summary) => summary.id)).toEqual(['s1'])
    expect((await store.open('s1')).events).toEqual(range(0, 2))
    await store.append('s1', range(2, 3))
    await store.close('s1')
    // Nothing but a torn tail is ever cut: the blank line stays, now between events.
    expect(await readFile(file, 'utf8')).toBe(`${whole}\n${eventText(event(2))}\n`)
    expect((await store.load('s1')).events).toEqual(range(0, 3))
  })

  it('passes over blank lines between events, empty, CRLF or spaces and tabs only', async () => {
    const { store } = await storeWith('s1', [headerText('s1'), '', eventText(event(0)), '\r', ' \t ', eventText(event(1)), '', ''].map((line) => `${line}\n`).join(''))
    expect(await store.load('s1')).toEqual({ header: header('s1'), events: range(0, 2) })
  })

  it('numbers a bad line after blank lines by its line in the file', async () => {
    const { file, store } = await storeWith('s1', fileOf([headerText('s1'), '', eventText(event(0)), '', eventText(event(5))]))
    await expect(store.load('s1')).rejects.toMatchObject({ code: 'SESSION_CORRUPT', details: { file, line: 5 } })
  })

  it('still cuts a torn final line after a blank line, and only that', async () => {
    const { file, store } = await storeWith('s1', `${whole}\n{"seq":2,"ty`)
    expect((await store.load('s1')).events).toEqual(range(0, 2))
    expect((await store.open('s1')).events).toEqual(range(0, 2))
    await store.close('s1')
    expect(await readFile(file, 'utf8')).toBe(`${whole}\n`)
  })

  it('takes no other blank-looking line for blank: zero bytes (what a power cut can leave) are corruption', async () => {
    const { file, store } = await storeWith('s1', fileOf([headerText('s1'), '\0\0\0\0', eventText(event(0))]))
    await expect(store.load('s1')).rejects.toMatchObject({ code: 'SESSION_CORRUPT', details: { file, line: 2 } })
    await expect(store.open('s1')).rejects.toMatchObject({ code: 'SESSION_CORRUPT', details: { file, line: 2 } })
  })

  it('does not take a file that opens with a blank line for a session: the header is line 1', async () => {
    const { store } = await storeWith('s1', `\n${whole}`)
    await expect(store.load('s1')).rejects.toMatchObject({ code: 'SESSION_CORRUPT', details: { line: 1 } })
  })
})

describe('a log larger than one read takes (past 2 GiB)', () => {
  it('is refused as too large by load, open and list, not as a matter of permissions or free space', async () => {
    const { root, file, store } = await storeWith('s1', fileOf([headerText('s1')]))
    await truncate(file, 2 ** 31 + 1) // sparse: nothing is written
    for (const attempt of [() => store.load('s1'), () => store.open('s1')]) {
      const error = await attempt().catch((caught: unknown) => caught)
      expect(error).toMatchObject({ code: 'SESSION_TOO_LARGE', details: { file } })
      expect((error as Error).message).not.toMatch(/permissions and free space/)
    }
    const unreadable: unknown[] = []
    expect(await store.list({ unreadable: (_id, error) => unreadable.push(error) })).toEqual([])
    expect(unreadable).toMatchObject([{ code: 'SESSION_TOO_LARGE' }])
    await expect(stat(join(root, 's1.lock'))).rejects.toMatchObject({ code: 'ENOENT' })
  })
})

describe('a log too large to decode as one string (past ~512 MiB)', () => {
  it('is decoded a part at a time, cut after a newline, with exactly the result of one decode', async () => {
    const { parseSessionFile } = await import('../src/jsonl-format.ts')
    const events = [...range(0, 5), userMessage(5, 'naïve café — 記録 😀'), ...range(6, 9)]
    for (const tail of ['', '{"seq":9,"type":"step/st']) {
      const content = Buffer.from(fileOf([headerText('s1'), ...events.map(eventText)]) + tail)
      const whole = parseSessionFile(content, 'f', 's1')
      for (const chunkBytes of [1, 7, 64, 200, 1000]) expect({ chunkBytes, parsed: parseSessionFile(content, 'f', 's1', chunkBytes) }).toEqual({ chunkBytes, parsed: whole })
    }
  })
})
