import { spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { summarize } from '@rein/session'
import { describe, expect, it } from 'vitest'
import { JsonlSessionStore } from '../src/index.ts'
import { headerLine } from '../src/jsonl-format.ts'
import { event, header, userMessage } from './fixtures/sessions.ts'
import { tempRoot } from './temp-root.ts'

const MiB = 1024 * 1024

/**
 * A log whose second event is one line of about `mib` MiB: a user message of that many bytes of
 * words (a huge paste), written a piece at a time so the test itself holds none of it.
 */
async function logWithHugeLine(root: string, id: string, mib: number): Promise<void> {
  const out = createWriteStream(join(root, `${id}.jsonl`), { mode: 0o600 })
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain')
  }
  await write(headerLine(header(id)))
  await write(`${JSON.stringify(event(0, 'turn/start', { turn: 1 }))}\n`)
  await write(`{"seq":1,"type":"user/message","time":"2026-01-01T00:00:01.000Z","data":{"message":{"id":"m1","role":"user","content":[{"type":"text","text":"`)
  const piece = `paste ${id} `.padEnd(MiB, 'x ')
  for (let index = 0; index < mib; index++) await write(piece)
  await write(`"}],"source":{"kind":"user"}}}}\n`)
  await write(`${JSON.stringify(event(2, 'turn/end', { turn: 1, reason: 'completed' }))}\n`)
  out.end()
  await once(out, 'close')
}

/** Lists `root` in a fresh process: what it listed and its peak resident memory. */
function listInChild(root: string): { sessions: { id: string; title?: string; turns: number; status: string }[]; errors: string[]; maxRss: number } {
  const script = fileURLToPath(new URL('fixtures/list-peak-memory.ts', import.meta.url))
  const child = spawnSync(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', script, root], { encoding: 'utf8' })
  expect(child.stderr).toBe('')
  return JSON.parse(child.stdout) as ReturnType<typeof listInChild>
}

describe('JsonlSessionStore.list, logs with huge lines', () => {
  it('lists logs holding a 100 MB line each within a small, bounded memory: it never holds a whole line or log', async () => {
    const root = await tempRoot()
    for (const id of ['a', 'b', 'c']) await logWithHugeLine(root, id, 100)
    const { sessions, errors, maxRss } = listInChild(root)
    expect(errors).toEqual([])
    expect(sessions.map(({ id, turns, status }) => ({ id, turns, status }))).toEqual(['a', 'b', 'c'].map((id) => ({ id, turns: 1, status: 'completed' })))
    // The title is what the message starts with, however long the line is.
    for (const session of sessions) expect(session.title?.startsWith(`paste ${session.id} x x x`)).toBe(true)
    // A whole 100 MB line read as bytes and as text, and parsed, is several hundred MB per log.
    expect(maxRss).toBeLessThan(150 * MiB)
  }, 120_000)
})

describe('JsonlSessionStore.list, lines longer than it holds whole (over 256 KiB)', () => {
  const big = (words: string) => `${words} ${'lorem ipsum é 😀 \\ "q" '.repeat(40_000)}`
  const eventText = (value: unknown) => `${JSON.stringify(value)}\n`
  const log = (id: string, lines: string[]) => headerLine(header(id)) + lines.join('')

  async function listOne(root: string) {
    const unreadable: { id: string; error: unknown }[] = []
    const listed = await new JsonlSessionStore({ root }).list({ unreadable: (id, error) => unreadable.push({ id, error }) })
    return { listed, unreadable }
  }

  it('summarizes them as a summary of the whole log does', async () => {
    const root = await tempRoot()
    const events = [
      event(0, 'turn/start', { turn: 1 }),
      userMessage(1, big('fix the parser please')),
      { ...event(2, 'tool/result', { callId: 'c', content: [{ type: 'text', text: big('output') }], isError: false }) },
      event(3, 'assistant/message', { message: { id: 'a', role: 'assistant', content: [{ type: 'text', text: big('done') }], source: { kind: 'model' } }, usage: { inputTokens: 11, outputTokens: 13 }, provider: 'p', model: 'big-model', cost: 0.25 }),
      event(4, 'turn/end', { turn: 1, reason: 'completed' }),
      { ...event(5, 'plugin/thing', { blob: big('x') }) },
    ]
    await writeFile(join(root, 's.jsonl'), log('s', events.map(eventText)))
    const { listed, unreadable } = await listOne(root)
    expect(unreadable).toEqual([])
    expect(listed).toEqual([summarize(header('s'), events)])
    expect(listed[0]).toMatchObject({ title: 'fix the parser please lorem ipsum é 😀 \\ "q" lorem ipsum…', model: 'big-model', requires: ['plugin/thing'] })
  })

  it('tells a long line that is no JSON as corrupt at its line, passes over a long blank one, and drops a long torn tail, as load does', async () => {
    const root = await tempRoot()
    const long = 'z'.repeat(600_000)
    await writeFile(join(root, 'bad.jsonl'), log('bad', [eventText(event(0)), `{"seq":1,"type":"x","time":"t","data":"${long}"\n`, eventText(event(2))]))
    await writeFile(join(root, 'blank.jsonl'), log('blank', [eventText(event(0)), `${' \t'.repeat(300_000)}\r\n`, eventText(event(1))]))
    await writeFile(join(root, 'torn.jsonl'), log('torn', [eventText(event(0)), `{"seq":1,"type":"x","time":"t","data":"${long}`]))
    await writeFile(join(root, 'misshapen.jsonl'), log('misshapen', [eventText(event(0, 'user/message', { message: { id: 'm', role: 'user', content: [{ type: 'text', text: long }], source: {} } }))]))
    const store = new JsonlSessionStore({ root })
    const { listed, unreadable } = await listOne(root)
    expect(listed.map(({ id }) => id).sort()).toEqual(['blank', 'torn'])
    expect(listed.find(({ id }) => id === 'torn')).toMatchObject({ lastActivity: event(0).time })
    const errors = Object.fromEntries(unreadable.map(({ id, error }) => [id, error]))
    await expect(store.load('bad')).rejects.toMatchObject({ code: 'SESSION_CORRUPT', details: { line: 3 } })
    expect(errors.bad).toMatchObject({ code: 'SESSION_CORRUPT', details: { line: 3 } })
    expect(errors.misshapen).toMatchObject({ code: 'SESSION_CORRUPT', details: { seq: 0, type: 'user/message' } })
    expect((await store.load('blank')).events).toHaveLength(2)
    expect((await store.load('torn')).events).toHaveLength(1)
  })
})
