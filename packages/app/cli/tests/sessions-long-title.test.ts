// `rein sessions` keeps each session on one readable line: a title with few spaces (a pasted log
// line, CJK text, a run of emoji) is cut for the listing, on a character a terminal shows whole;
// `--json` keeps the title as the store has it.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import stringWidth from 'string-width'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, spawnRein } from './harness.ts'

const setUp = projectPerTest(afterEach)
const time = '2026-01-01T00:00:00.000Z'

function writeSession(root: string, id: string, text: string) {
  mkdirSync(root, { recursive: true, mode: 0o700 })
  const header = { kind: 'rein-session', formatVersion: 1, id, createdAt: time, cwd: root, depth: 0 }
  const message = { id: 'm1', role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } }
  const events = [
    { seq: 0, type: 'turn/start', time, data: { turn: 1 } },
    { seq: 1, type: 'user/message', time, data: { message } },
    { seq: 2, type: 'turn/end', time, data: { turn: 1, reason: 'completed' } },
  ]
  writeFileSync(join(root, `${id}.jsonl`), `${[header, ...events].map((line) => JSON.stringify(line)).join('\n')}\n`, { mode: 0o600 })
}

const family = '👨‍👩‍👧‍👦'
const titles = {
  'aaaaaaaa-0000-4000-8000-000000000001': 'x'.repeat(3000),
  'bbbbbbbb-0000-4000-8000-000000000002': '日本語'.repeat(400),
  'cccccccc-0000-4000-8000-000000000003': `${'a'.repeat(78)}${family.repeat(20)}`,
}

describe('rein sessions with a very long title', () => {
  it('cuts a title with no spaces to one short line, whole characters and an ellipsis, and --json keeps it whole', async () => {
    const p = await setUp([])
    for (const [id, title] of Object.entries(titles)) writeSession(join(p.home, 'sessions'), id, title)
    const env = { REIN_HOME: p.home }
    const listed = await spawnRein(p.dir, ['sessions'], undefined, env)
    expect(listed.code).toBe(0)
    const lines = listed.stdout.trim().split('\n')
    expect(lines).toHaveLength(3)
    for (const line of lines) {
      const id = line.split(' ')[0]!
      // After the tokens and the cost (`-`: no price), two spaces, then the title.
      const shown = /tok +- {2}(.*)$/.exec(line)![1]!
      expect(stringWidth(shown)).toBeLessThanOrEqual(80)
      expect(shown.endsWith('…')).toBe(true)
      // Whole graphemes only: what is shown before the ellipsis starts the title as stored.
      expect(titles[id as keyof typeof titles].startsWith(shown.slice(0, -1))).toBe(true)
    }
    expect(lines.find((line) => line.startsWith('cccccccc'))).toMatch(new RegExp(`a{78}…$`))
    const json = await spawnRein(p.dir, ['sessions', '--json'], undefined, env)
    const stored = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string; title: string })
    for (const session of stored) expect(session.title).toBe(titles[session.id as keyof typeof titles])
  }, 60_000)
})
