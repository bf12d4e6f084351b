// `rein sessions` and the commands that take a session id: the order sessions are listed in, the
// id a prefix resolved to, and the lines about files that are not listed.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, rein, spawnRein } from './harness.ts'

const setUp = projectPerTest(afterEach)

/** A session that completed one turn, its events stamped `time` (as a hand-edited log may hold it). */
function writeSession(root: string, id: string, time: string) {
  mkdirSync(root, { recursive: true, mode: 0o700 })
  const header = { kind: 'rein-session', formatVersion: 1, id, createdAt: time, cwd: root, depth: 0 }
  const message = { id: 'm1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }
  const events = [
    { seq: 0, type: 'turn/start', time, data: { turn: 1 } },
    { seq: 1, type: 'user/message', time, data: { message } },
    { seq: 2, type: 'turn/end', time, data: { turn: 1, reason: 'completed' } },
  ]
  writeFileSync(join(root, `${id}.jsonl`), `${[header, ...events].map((line) => JSON.stringify(line)).join('\n')}\n`, { mode: 0o600 })
}

const ids = { offset: 'aaaaaaaa-0000-4000-8000-000000000001', later: 'bbbbbbbb-0000-4000-8000-000000000002', tieC: 'cccccccc-0000-4000-8000-000000000003', tieD: 'dddddddd-0000-4000-8000-000000000004' }

describe('rein sessions', () => {
  it('lists the newest first by the instant each time names (an offset counted), ties by id, not by comparing the time texts', async () => {
    const p = await setUp([])
    const root = join(p.home, 'sessions')
    // 10:00 at +02:00 is 08:00 UTC: older than 09:30 UTC, though its text sorts after it.
    writeSession(root, ids.offset, '2026-01-01T10:00:00.000+02:00')
    writeSession(root, ids.later, '2026-01-01T09:30:00.000Z')
    writeSession(root, ids.tieD, '2026-01-01T07:00:00.000Z')
    writeSession(root, ids.tieC, '2026-01-01T07:00:00.000Z')
    const listed = await rein(p.dir, ['sessions', '--json'])
    expect(listed.code).toBe(0)
    expect(listed.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id)).toEqual([ids.later, ids.offset, ids.tieC, ids.tieD])
  })

  it('lines up its columns when a model name holds combining marks or wide characters, padded by display width', async () => {
    const p = await setUp(() => ({ steps: [{ text: 'ok' }] }))
    for (const model of ['mo\u0301del', '\u6a21\u578b', 'plain']) expect((await rein(p.dir, ['run', '--model', model, 'hi'])).code).toBe(0)
    const listed = await rein(p.dir, ['sessions'])
    expect(listed.code).toBe(0)
    const lines = listed.stdout.trim().split('\n')
    expect(lines).toHaveLength(3)
    // Where the turns column starts, in terminal columns: a combining mark takes none, a CJK character two.
    const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' })
    const columns = (text: string) => Array.from(graphemes.segment(text)).reduce((sum, { segment }) => sum + (/\p{Script=Han}/u.test(segment) ? 2 : 1), 0)
    const turnsAt = lines.map((line) => columns(line.slice(0, line.indexOf(' 1 turn'))))
    expect(new Set(turnsAt).size).toBe(1)
  })

  it('shows each time in UTC and says so, not as a bare clock time a reader takes for local time', async () => {
    const p = await setUp([])
    const root = join(p.home, 'sessions')
    // 10:00 at +02:00 is 08:00 UTC; read on a machine at +09:00, where neither is the local time.
    writeSession(root, ids.offset, '2026-01-01T10:00:00.000+02:00')
    writeSession(root, ids.later, '2026-01-01T09:30:00.000Z')
    const listed = await spawnRein(p.dir, ['sessions'], undefined, { REIN_HOME: p.home, TZ: 'Asia/Tokyo' })
    expect(listed.code).toBe(0)
    const lines = listed.stdout.trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(new RegExp(`^${ids.later}  2026-01-01 09:30 UTC  completed `))
    expect(lines[1]).toMatch(new RegExp(`^${ids.offset}  2026-01-01 08:00 UTC  completed `))
  }, 60_000)

  it('quotes a file name with spaces in the line about a log it does not list', async () => {
    const p = await setUp([])
    const root = join(p.home, 'sessions')
    writeSession(root, ids.later, '2026-01-01T09:30:00.000Z')
    writeFileSync(join(root, 'copy of big.jsonl'), 'whatever\n', { mode: 0o600 })
    const listed = await rein(p.dir, ['sessions'])
    expect(listed.code).toBe(0)
    expect(listed.stderr).toContain("(session 'copy of big' not listed: INVALID_SESSION_ID; its file name is no session id: rename the file or move it out of the sessions folder)\n")
  })
})

describe('a session id given by its start', () => {
  it('is said in full once resolved, and matched whatever its case', async () => {
    const p = await setUp([])
    writeSession(join(p.home, 'sessions'), ids.later, '2026-01-01T09:30:00.000Z')
    const resumed = await rein(p.dir, ['resume', 'BBBBBBBB'])
    expect(resumed.code).toBe(2)
    expect(resumed.stderr).toBe(`rein: session ${ids.later} ended cleanly, so there is nothing to continue; add a message: rein resume ${ids.later} "…"\n`)
  })
})
