// `rein rewind`, `rein show`'s checkpoint marks and `rein demo`'s rewind (issue #11 §3), against
// the real tool-fs, checkpoint and checkpoint-jsonl packages and a mock model.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { eventData, type SessionEvent } from '@rein/session'
import { JsonlSessionStore } from '@rein/session-jsonl'
import type { MockReply } from '@rein/testkit'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { resultLines } from '../src/rewind/table.ts'
import { answer, CHECKPOINT_ROWS } from './checkpoint-rows.ts'
import { projectPerTest, rein, sessionIdOf, spawnRein, type Project } from './harness.ts'

const setUp = projectPerTest(afterEach)

const call = (id: string, name: string, args: object): MockReply => ({ steps: [{ toolCall: { id, name, arguments: JSON.stringify(args) } }] })

/** Turn 1 creates a.txt; turn 2 edits it and creates b.txt. */
const TWO_TURNS: MockReply[] = [
  call('w1', 'write', { path: 'a.txt', content: 'one\n' }),
  answer('wrote a'),
  call('r1', 'read', { path: 'a.txt' }),
  call('e1', 'edit', { path: 'a.txt', old_string: 'one', new_string: 'two' }),
  call('w2', 'write', { path: 'b.txt', content: 'new\n' }),
  answer('changed a, wrote b'),
]

async function twoTurns(extra: MockReply[] = []): Promise<{ p: Project; id: string }> {
  const p = await setUp([...TWO_TURNS, ...extra], { extraRows: CHECKPOINT_ROWS })
  const first = await rein(p.dir, ['run', '--yes', 'make a'])
  expect(first.code).toBe(0)
  const id = sessionIdOf(first)
  expect((await rein(p.dir, ['run', '--yes', '--session', id, 'change a, add b'])).code).toBe(0)
  expect(readFileSync(join(p.dir, 'a.txt'), 'utf8')).toBe('two\n')
  return { p, id }
}

function logFile(p: Project, id: string): string {
  return join(p.home, 'sessions', `${id}.jsonl`)
}

async function storedEvents(p: Project, id: string): Promise<SessionEvent[]> {
  return (await new JsonlSessionStore({ root: join(p.home, 'sessions') }).load(id)).events
}

describe('rein rewind', () => {
  it('puts the files back as they were before the turn, and says so file by file', async () => {
    const { p, id } = await twoTurns()
    // By the id of the message that started turn 2, as by its number.
    const turn2 = (await storedEvents(p, id)).filter((event) => event.type === 'turn/start')[1]!
    const run = await rein(p.dir, ['rewind', id, '--to', eventData(turn2, 'turn/start').anchor!])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe([
      `rewound session ${id} to before turn 2`,
      'file   outcome   reason',
      'b.txt  removed',
      'a.txt  restored',
      '1 removed, 1 restored',
      '',
    ].join('\n'))
    expect(readFileSync(join(p.dir, 'a.txt'), 'utf8')).toBe('one\n')
    expect(existsSync(join(p.dir, 'b.txt'))).toBe(false)
    // Again: nothing left to do, and it says so.
    const again = await rein(p.dir, ['rewind', id, '--to', '2'])
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/^a\.txt {2}already restored$/m)
    expect(again.stdout).toMatch(/^b\.txt {2}already restored$/m)
  })

  it('changes nothing with --dry-run, and prints the plan', async () => {
    const { p, id } = await twoTurns()
    const log = readFileSync(logFile(p, id))
    const run = await rein(p.dir, ['rewind', id, '--to', '2', '--dry-run'])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe([
      `plan: rewind session ${id} to before turn 2 (dry run: nothing was changed)`,
      'file   outcome  reason',
      'b.txt  remove',
      'a.txt  restore',
      '1 to remove, 1 to restore',
      '',
    ].join('\n'))
    expect(readFileSync(join(p.dir, 'a.txt'), 'utf8')).toBe('two\n')
    expect(readFileSync(join(p.dir, 'b.txt'), 'utf8')).toBe('new\n')
    expect(readFileSync(logFile(p, id))).toEqual(log)
  })

  it('leaves a file a person changed since, reports it drifted, and exits 5', async () => {
    const { p, id } = await twoTurns()
    writeFileSync(join(p.dir, 'a.txt'), 'two, and a line of mine\n')
    const plan = await rein(p.dir, ['rewind', id, '--to', '2', '--dry-run'])
    expect(plan.code).toBe(5)
    expect(plan.stdout).toMatch(/^a\.txt {2}drifted {2}changed since the recorded edit$/m)
    const run = await rein(p.dir, ['rewind', id, '--to', '2'])
    expect(run.code).toBe(5)
    expect(run.stdout).toMatch(/^a\.txt {2}drifted {2}changed since the recorded edit$/m)
    expect(run.stdout).toContain('1 removed, 1 drifted\nfiles not restored were left as they were before this rewind (not undone)')
    expect(readFileSync(join(p.dir, 'a.txt'), 'utf8')).toBe('two, and a line of mine\n')
    expect(existsSync(join(p.dir, 'b.txt'))).toBe(false)
  })

  it('with --dry-run reports a file whose stored content is missing as not restorable, and exits 5, as the rewind then does', async () => {
    const { p, id } = await twoTurns()
    rmSync(join(p.home, 'sessions', `${id}.files`, 'checkpoint-blobs', createHash('sha256').update('one\n').digest('hex')))
    const plan = await rein(p.dir, ['rewind', id, '--to', '2', '--dry-run'])
    expect(plan.code).toBe(5)
    expect(plan.stdout).toMatch(/^a\.txt {2}skipped {2}cannot be restored: CHECKPOINT_BLOB_MISSING: /m)
    const run = await rein(p.dir, ['rewind', id, '--to', '2'])
    expect(run.code).toBe(5)
    expect(run.stdout).toMatch(/^a\.txt {2}failed {3}CHECKPOINT_BLOB_MISSING: /m)
    expect(readFileSync(join(p.dir, 'a.txt'), 'utf8')).toBe('two\n')
  })

  it('says which turns lost their checkpoints to retention, and exits 5, instead of claiming a whole rewind', async () => {
    const p = await setUp(TWO_TURNS, { extraRows: [CHECKPOINT_ROWS[0]!, "- { id: checkpoints, name: '@rein/checkpoint', config: { keepTurns: 1 } }", CHECKPOINT_ROWS[2]!] })
    const id = sessionIdOf(await rein(p.dir, ['run', '--yes', 'make a']))
    expect((await rein(p.dir, ['run', '--yes', '--session', id, 'change a, add b'])).code).toBe(0)
    const run = await rein(p.dir, ['rewind', id, '--to', '1'])
    expect(run.code).toBe(5)
    expect(run.stdout).toContain('the checkpoints of turn 1 were dropped by retention (keepTurns, keepDays, maxSessionBytes of @rein/checkpoint): what it changed is not undone')
    // Turn 2's own changes are undone; turn 1's file stays as turn 1 left it.
    expect(readFileSync(join(p.dir, 'a.txt'), 'utf8')).toBe('one\n')
    expect(existsSync(join(p.dir, 'b.txt'))).toBe(false)
    const json = JSON.parse((await rein(p.dir, ['rewind', id, '--to', '1', '--dry-run', '--json'])).stdout) as { pruned: string[] }
    expect(json.pruned).toHaveLength(1)
  })

  it('prints the result as JSON with --json', async () => {
    const { p, id } = await twoTurns()
    const run = await rein(p.dir, ['rewind', id, '--to', '2', '--json'])
    const result = JSON.parse(run.stdout) as { type: string; turn: number; restored: { path: string }[]; drifted: unknown[] }
    expect(result).toMatchObject({ type: 'rewind', turn: 2, sessionId: id, drifted: [], failed: [] })
    expect(result.restored.map((item) => item.path)).toEqual(['b.txt', 'a.txt'])
  })

  it('with --fork starts a session holding the log before that turn; the original keeps its turns', async () => {
    const { p, id } = await twoTurns([answer('again, from turn 1')])
    const original = readFileSync(logFile(p, id), 'utf8')
    const run = await rein(p.dir, ['rewind', id, '--to', '2', '--fork'])
    expect(run.code).toBe(0)
    const fork = /^fork (\S+): a new session holding turn 1 of session (\S+); rein resume \1 "…" continues from there, and session \2 keeps its turns$/m.exec(run.stdout)
    expect(fork?.[2]).toBe(id)
    const forkId = fork![1]!
    // The original's log is as it was: no rewind notice, since the fork carries the conversation on.
    expect(readFileSync(logFile(p, id), 'utf8')).toBe(original)
    const events = await storedEvents(p, id)
    const turn2 = events.find((event) => event.type === 'turn/start' && eventData(event, 'turn/start').turn === 2)!
    const strip = (list: readonly SessionEvent[]) => list.map(({ type, data, ignorable }) => ({ type, data, ignorable }))
    const forked = await storedEvents(p, forkId)
    expect(strip(forked.slice(0, -1))).toEqual(strip(events.filter((event) => event.seq < turn2.seq)))
    // Where the copy ends: the tokens and money before it were the original's, not spent again.
    expect(strip(forked.slice(-1))).toEqual([{ type: 'session/forked', data: { fromSessionId: id, beforeSeq: turn2.seq }, ignorable: true }])
    const listed = (await rein(p.dir, ['sessions', '--json'])).stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string; usage: { inputTokens: number } })
    expect(listed.find((session) => session.id === forkId)?.usage.inputTokens).toBe(0)
    expect(listed.find((session) => session.id === id)?.usage.inputTokens).toBeGreaterThan(0)
    // The fork continues from turn 1: the model sees the first exchange and the new message only.
    const resumed = await rein(p.dir, ['resume', forkId, 'try another way'])
    expect(resumed.code).toBe(0)
    const messages = (p.server.requests.at(-1)!.body as { messages: { role: string; content: string | null }[] }).messages
    expect(messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['make a', 'try another way'])
  })

  it('with --fork --dry-run creates nothing', async () => {
    const { p, id } = await twoTurns()
    const sessions = (await rein(p.dir, ['sessions'])).stdout
    const dry = await rein(p.dir, ['rewind', id, '--to', '2', '--fork', '--dry-run'])
    expect(dry.stdout).toContain(`--fork would start a new session holding turn 1 of session ${id} (the log before turn 2)`)
    expect((await rein(p.dir, ['sessions'])).stdout.split('\n').length).toBe(sessions.split('\n').length)
  })

  it('refuses --fork before turn 1 with exit 2, touching no file and no log, since no fork would tell the model the files went back', async () => {
    const { p, id } = await twoTurns()
    const sessions = (await rein(p.dir, ['sessions'])).stdout
    const log = readFileSync(logFile(p, id))
    for (const argv of [[], ['--dry-run']]) {
      const first = await rein(p.dir, ['rewind', id, '--to', '1', '--fork', ...argv])
      expect(first.code).toBe(2)
      expect(first.stderr).toContain('--fork needs a turn after the first')
      expect(first.stdout).toBe('')
    }
    expect(readFileSync(join(p.dir, 'a.txt'), 'utf8')).toBe('two\n')
    expect(readFileSync(join(p.dir, 'b.txt'), 'utf8')).toBe('new\n')
    expect(readFileSync(logFile(p, id))).toEqual(log)
    expect((await rein(p.dir, ['sessions'])).stdout).toBe(sessions)
  })

  it('goes back to the turn a continued turn answers', async () => {
    const p = await setUp([call('w1', 'write', { path: 'a.txt', content: 'one\n' }), answer('done')], { extraRows: CHECKPOINT_ROWS })
    const id = sessionIdOf(await rein(p.dir, ['run', '--yes', '--max-steps', '1', 'make a']))
    expect((await rein(p.dir, ['resume', id])).code).toBe(0)
    const run = await rein(p.dir, ['rewind', id, '--to', '2'])
    expect(run.code).toBe(0)
    expect(run.stderr).toContain('turn 2 continues turn 1 (it answers the same message), so the rewind goes back to before turn 1')
    expect(run.stdout).toContain('a.txt  removed')
  })

  it('says there is nothing to rewind for a session without checkpoint records', async () => {
    const p = await setUp([answer('hello')], { extraRows: CHECKPOINT_ROWS })
    const id = sessionIdOf(await rein(p.dir, ['run', 'hi']))
    const run = await rein(p.dir, ['rewind', id, '--to', '1'])
    expect(run).toMatchObject({ code: 0, stdout: `nothing to rewind: session ${id} has no recorded file changes from turn 1 on\n` })
  })
})

describe('rein rewind: the result table', () => {
  it('quotes an error naming a file with a line break or a bidi control in a failed row, so the row stays one line that reads as it is', () => {
    const failed = (path: string, error: string) => ({ root: '/w', path, file: `/w/${path}`, action: 'restore' as const, before: 'h', after: 'h2', seqs: [1], error })
    const result = {
      sessionId: 's1', anchor: 'm1', restored: [], already: [], drifted: [], skipped: [], notCovered: [], cutOff: [], pruned: [],
      failed: [failed('evil\nname.txt', "EACCES: permission denied, open '/w/evil\nname.txt'"), failed('rtl\u202etxt.exe', "EACCES: permission denied, open '/w/rtl\u202etxt.exe'")],
    }
    const lines = resultLines(result, '/w')
    expect(lines).toEqual([
      'file                outcome  reason',
      '"evil\\nname.txt"    failed   "EACCES: permission denied, open \'/w/evil\\nname.txt\'"',
      '"rtl\\u202etxt.exe"  failed   "EACCES: permission denied, open \'/w/rtl\\u202etxt.exe\'"',
      '2 failed',
    ])
  })
})

describe('rein rewind: a turn with nothing recorded but a command a kill cut off', () => {
  it('prints what is not covered and no empty table, nor a blank count line', () => {
    const cut = '`bash: make` was cut off when rein was stopped (COMMAND_INTERRUPTED): what it changed was not recorded and is not undone; check by hand'
    const result = { sessionId: 's1', anchor: 'm1', restored: [], already: [], drifted: [], skipped: [], failed: [], notCovered: [cut], cutOff: [{ callId: 'c1', by: 'bash: make', code: 'COMMAND_INTERRUPTED' }], pruned: [] }
    expect(resultLines(result, '/w')).toEqual(['not covered by the records (check these by hand):', `  ${cut}`])
  })
})

describe('rein rewind: the table\'s columns', () => {
  it('line up when a file name holds combining marks, wide (CJK, emoji) or zero-width characters, padded by display width, not string length', () => {
    const item = (path: string, seq: number, reason?: string) => ({ root: '/w', path, file: `/w/${path}`, action: 'drifted' as const, before: 'h', after: 'h2', seqs: [seq], ...(reason ? { reason } : {}) })
    const result = {
      sessionId: 's1', anchor: 'm1', restored: [item('plain.txt', 6)], already: [], skipped: [], notCovered: [], cutOff: [], pruned: [], failed: [],
      // e + combining acute (1 column, 2 code units); CJK (2 columns each); a ZWJ emoji sequence (2 columns, 5 code units); a zero-width space.
      drifted: [item('cafe\u0301.txt', 5, 'changed since'), item('\u6f22\u5b57.txt', 4, 'changed since'), item('\u{1F469}\u200d\u{1F4BB}.txt', 3, 'changed since'), item('a\u200bb.txt', 2, 'changed since')],
    }
    expect(resultLines(result, '/w')).toEqual([
      'file       outcome   reason',
      'plain.txt  restored',
      'cafe\u0301.txt   drifted   changed since',
      '\u6f22\u5b57.txt   drifted   changed since',
      '\u{1F469}\u200d\u{1F4BB}.txt     drifted   changed since',
      'a\u200bb.txt     drifted   changed since',
      '1 restored, 4 drifted',
    ])
  })
})

describe('rein rewind: the command a file changed under', () => {
  it('is shown on one line, quoted when it spans lines (a heredoc), and cut when long, so the row stays one line', () => {
    const restored = (path: string, changedWhile: string) => ({ root: '/w', path, file: `/w/${path}`, action: 'restore' as const, before: 'h', after: 'h2', seqs: [1], changedWhile })
    const result = {
      sessionId: 's1', anchor: 'm1', already: [], drifted: [], skipped: [], notCovered: [], cutOff: [], pruned: [], failed: [],
      restored: [restored('a.txt', "bash: cat > a.txt <<'EOF'\nnew\nEOF"), restored('b.txt', `bash: ${'x'.repeat(200)}`)],
    }
    const lines = resultLines(result, '/w')
    expect(lines.every((line) => !line.includes('\n'))).toBe(true)
    expect(lines[1]).toContain('changed while "bash: cat > a.txt <<\'EOF\'\\nnew\\nEOF" ran')
    expect(lines[2]).toMatch(/changed while `bash: x+…` ran/)
    expect(lines[2]!.length).toBeLessThan(160)
  })
})

describe('rein rewind of a session a kill left mid-turn', () => {
  /** Two turns as twoTurns makes them, then a third whose request the process is killed in. */
  async function killedInTurnThree(): Promise<{ p: Project; id: string }> {
    let asked: () => void = () => {}
    const p = await setUp((_request, index) => {
      if (index < TWO_TURNS.length) return TWO_TURNS[index]!
      asked()
      return { steps: [{ stall: true }] }
    }, { extraRows: CHECKPOINT_ROWS })
    const id = sessionIdOf(await rein(p.dir, ['run', '--yes', 'make a']))
    expect((await rein(p.dir, ['run', '--yes', '--session', id, 'change a, add b'])).code).toBe(0)
    const killed = await spawnRein(p.dir, ['run', '--yes', '--session', id, 'and then'], undefined, {}, [], (child) => { asked = () => child.kill('SIGKILL') })
    expect(killed.signal).toBe('SIGKILL')
    return { p, id }
  }

  const cutOff = (events: readonly SessionEvent[]) => events.filter((event) => event.type === 'llm/attempt' && (event.data as { failure?: { code?: string }; usageEstimated?: boolean }).failure?.code === 'ABORTED')

  it('closes the cut-off turn first, counting its request once, as rein compact does, then rewinds', async () => {
    const { p, id } = await killedInTurnThree()
    expect(cutOff(await storedEvents(p, id))).toEqual([])
    const run = await rein(p.dir, ['rewind', id, '--to', '2'])
    expect(run.code).toBe(0)
    expect(run.stderr).toContain(`session ${id} had stopped mid-turn; turn 3 is closed as interrupted`)
    expect(readFileSync(join(p.dir, 'a.txt'), 'utf8')).toBe('one\n')
    const events = await storedEvents(p, id)
    expect(cutOff(events).map((event) => event.data)).toEqual([expect.objectContaining({ usageEstimated: true, usage: expect.objectContaining({ outputTokens: 0 }) })])
    expect(events.filter((event) => event.type === 'turn/end').length).toBe(3)
  })

  it('changes nothing in its log with --dry-run', async () => {
    const { p, id } = await killedInTurnThree()
    const before = readFileSync(logFile(p, id), 'utf8')
    expect((await rein(p.dir, ['rewind', id, '--to', '2', '--dry-run'])).code).toBe(0)
    expect(readFileSync(logFile(p, id), 'utf8')).toBe(before)
  })
})

describe('rein rewind: bad input', () => {
  it('refuses a missing --to or id, an unknown session, turn or message with exit 2', async () => {
    const { p, id } = await twoTurns()
    expect(await rein(p.dir, ['rewind'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^rein: rein rewind needs a session id and --to <turn>/) as unknown })
    expect(await rein(p.dir, ['rewind', id])).toMatchObject({ code: 2, stderr: `rein: rein rewind needs --to <turn number|message id>: the turn to go back before (rein show ${id} numbers the turns)\n` })
    expect((await rein(p.dir, ['rewind', 'no-such-session', '--to', '1'])).stderr).toMatch(/^rein: no session no-such-session: .* does not exist/)
    const range = await rein(p.dir, ['rewind', id, '--to', '3'])
    expect(range).toMatchObject({ code: 2, stderr: `rein: session ${id} has no turn 3; --to takes a turn number (turns 1 to 2) or the id of a message that started a turn (rein show ${id} numbers them)\n` })
    expect((await rein(p.dir, ['rewind', id, '--to', '0'])).code).toBe(2)
    expect((await rein(p.dir, ['rewind', id, '--to', 'msg-nope'])).stderr).toBe(`rein: session ${id} has no message msg-nope; --to takes a turn number (turns 1 to 2) or the id of a message that started a turn\n`)
    expect(readFileSync(join(p.dir, 'a.txt'), 'utf8')).toBe('two\n')
  })

  it('says an assistant message id names the model\'s answer in a turn, and that --to takes a user message that started one', async () => {
    const { p, id } = await twoTurns()
    const answered = (await storedEvents(p, id)).filter((event) => event.type === 'assistant/message').at(-1)!
    const messageId = eventData(answered, 'assistant/message').message.id
    const run = await rein(p.dir, ['rewind', id, '--to', messageId])
    expect(run).toMatchObject({
      code: 2,
      stderr: `rein: message ${messageId} is an assistant message (in turn 2 of session ${id}), not one that started a turn; --to takes a turn number (turns 1 to 2) or the id of the user message that started a turn (--to 2 goes back before the turn it is in)\n`,
    })
    expect(readFileSync(join(p.dir, 'a.txt'), 'utf8')).toBe('two\n')
  })

  it('refuses a session another process holds, naming it', async () => {
    const { p, id } = await twoTurns()
    const holder = spawn('sleep', ['30'])
    try {
      writeFileSync(join(p.home, 'sessions', `${id}.lock`), String(holder.pid))
      const run = await rein(p.dir, ['rewind', id, '--to', '2'])
      expect(run).toMatchObject({ code: 2, stderr: `rein: session ${id} is in use by process ${holder.pid}; wait for it to finish, or end it (kill ${holder.pid}), then rewind\n` })
      expect(readFileSync(join(p.dir, 'a.txt'), 'utf8')).toBe('two\n')
    } finally {
      holder.kill()
    }
  })

  it('says which rows are missing when the composition has no checkpoints', async () => {
    const p = await setUp([answer('hello')])
    const id = sessionIdOf(await rein(p.dir, ['run', 'hi']))
    const run = await rein(p.dir, ['rewind', id, '--to', '1'])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('has no @rein/checkpoint row, which rein rewind needs (with @rein/checkpoint-jsonl')
  })
})

describe('rein show: checkpoint marks', () => {
  it('marks the turns that have checkpoints with their number of files', async () => {
    const { p, id } = await twoTurns()
    const show = await rein(p.dir, ['show', id])
    expect(show.code).toBe(0)
    expect(show.stdout).toContain('── turn 1  [checkpoint: 1 file]\n')
    expect(show.stdout).toContain('── turn 2  [checkpoint: 2 files]\n')
  })

  it('shows turns without marks when checkpoints are not loaded', async () => {
    const p = await setUp([answer('hello')])
    const id = sessionIdOf(await rein(p.dir, ['run', 'hi']))
    const show = await rein(p.dir, ['show', id])
    expect(show).toMatchObject({ code: 0, stderr: '' })
    expect(show.stdout).toMatch(/── turn 1\n/)
  })
})

describe('rein demo', () => {
  it('edits the README with a scripted model, then rewinds the edit', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rein-demo-home-'))
    try {
      const run = await rein('/', ['demo'], { env: { REIN_HOME: home } })
      expect(run.code).toBe(0)
      expect(run.stderr).toContain('a SCRIPTED model')
      // It delegates once: the subagent's check shows under the call, its tokens in the total.
      expect(run.stderr).toContain('  [tool] Subagent: check the fix …\n    [tool] Look for the typo ok\n  [tool] Subagent: check the fix ok\n')
      expect(run.stderr).toMatch(/\(subagents in [\d,]+ \(cached [\d,]+\) out \d+\) · cost /)
      expect(run.stdout).toMatch(/^README\.md {2}restored$/m)
      expect(run.stderr).toContain('README.md is as it was before the turn, typo included: "Lighthouse watches a folder and reports teh files')
      // The demo's memory is its own, thrown away after: the user's notes never reach the scripted prompt.
      expect(existsSync(join(home, 'memory.db'))).toBe(false)
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  })

  it('says a demo session goes on only with a model of yours, and how to pick one, rather than to add the demo\'s provider row', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rein-demo-home-'))
    try {
      const run = await rein('/', ['demo'], { env: { REIN_HOME: home } })
      const id = /rewound session (\S+)/.exec(`${run.stdout}${run.stderr}`)?.[1]
      expect(id).toBeDefined()
      const env = { REIN_HOME: home, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-test', REIN_MODEL: 'm1' }
      const resume = await rein('/', ['resume', String(id), 'go on'], { env })
      expect(resume.code).toBe(2)
      expect(resume.stderr).toContain('was made by rein demo: its scripted model and its workspace are gone')
      expect(resume.stderr).toContain('--provider openai')
      expect(resume.stderr).not.toContain('add its provider row')
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  })
})

describe('a provider named "demo" outside a demo session', () => {
  it('is reported as any provider no row serves, not as a session rein demo made', async () => {
    const p = await setUp([answer('hello')], { agent: { fallbacks: [{ provider: 'demo', model: 'x' }] } })
    const run = await rein(p.dir, ['run', 'hi'], { env: { REIN_HOME: p.home } })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('config.fallbacks[0].provider: no loaded provider serves "demo"')
    expect(run.stderr).not.toContain('rein demo')
  })
})

/** The built-in composition for `p` (its cordis.yml removed): the environment that points it at the mock. */
function builtIn(p: { dir: string; home: string; server: { url: string } }) {
  rmSync(join(p.dir, 'cordis.yml'))
  // The key is read when a request goes out, from the process's environment.
  vi.stubEnv('OPENAI_API_KEY', 'sk-test')
  return { REIN_HOME: p.home, OPENAI_BASE_URL: p.server.url, OPENAI_API_KEY: 'sk-test', REIN_MODEL: 'm1' }
}

describe('rein rewind with the built-in composition', () => {
  it('undoes a bash command, keeping snapshots, what it moves aside and copies of what it restores in the REIN_HOME rein was given', async () => {
    const p = await setUp([
      call('b1', 'bash', { command: 'echo made > made.txt && echo v2 > kept.txt', description: 'Make a file' }),
      answer('made it'),
    ])
    const env = builtIn(p)
    writeFileSync(join(p.dir, 'kept.txt'), 'v1\n')
    const run = await rein(p.dir, ['run', '--yes', 'make a file'], { env })
    expect(run.code).toBe(0)
    expect(readFileSync(join(p.dir, 'made.txt'), 'utf8')).toBe('made\n')
    expect(existsSync(join(p.home, 'snapshots'))).toBe(true)
    const rewind = await rein(p.dir, ['rewind', sessionIdOf(run), '--to', '1'], { env })
    expect(rewind.code).toBe(0)
    expect(rewind.stdout).toMatch(/made\.txt +moved aside +now at .*recovered/)
    expect(rewind.stdout).toMatch(/kept\.txt +restored +changed while `bash: echo made > made\.txt && echo v2 > kept\.txt` ran; what it held is at .*recovered/)
    expect(readFileSync(join(p.dir, 'kept.txt'), 'utf8')).toBe('v1\n')
    expect(existsSync(join(p.dir, 'made.txt'))).toBe(false)
    expect(existsSync(join(p.home, 'recovered'))).toBe(true)
    vi.unstubAllEnvs()
  })

  it('says once, as the dry run does, that a folder a command made files in goes, also on a row moved aside', async () => {
    const p = await setUp([
      call('b1', 'bash', { command: 'mkdir -p gen && for n in a b c; do echo $n > gen/$n.txt; done', description: 'Make files' }),
      answer('made them'),
    ])
    const env = builtIn(p)
    const run = await rein(p.dir, ['run', '--yes', 'make files'], { env })
    expect(run.code).toBe(0)
    const dryRun = await rein(p.dir, ['rewind', sessionIdOf(run), '--to', '1', '--dry-run'], { env })
    expect(dryRun.stdout.match(/removes the folder made for it: gen/g)).toHaveLength(1)
    const rewind = await rein(p.dir, ['rewind', sessionIdOf(run), '--to', '1'], { env })
    expect(rewind.code).toBe(0)
    expect(rewind.stdout.match(/moved aside +now at /g)).toHaveLength(3)
    expect(rewind.stdout.match(/removed the folder made for it: gen/g)).toHaveLength(1)
    expect(existsSync(join(p.dir, 'gen'))).toBe(false)
    vi.unstubAllEnvs()
  })

  it('undoes commands that made, removed and replaced folders, marks them as folders in show, and exits 0 when all is back', async () => {
    const p = await setUp([
      call('b1', 'bash', { command: 'mkdir out && rmdir old', description: 'Make and remove folders' }),
      answer('done'),
      call('b2', 'bash', { command: 'rmdir out && echo x > out', description: 'Put a file where a folder was' }),
      answer('done'),
    ])
    const env = builtIn(p)
    mkdirSync(join(p.dir, 'old'))
    const first = await rein(p.dir, ['run', '--yes', 'folders'], { env })
    expect(first.code).toBe(0)
    const id = sessionIdOf(first)
    expect((await rein(p.dir, ['run', '--yes', '--session', id, 'a file'], { env })).code).toBe(0)
    expect(readFileSync(join(p.dir, 'out'), 'utf8')).toBe('x\n')
    const show = await rein(p.dir, ['show', id], { env })
    expect(show.stdout).toContain('── turn 1  [checkpoint: 2 folders]\n')
    expect(show.stdout).toContain('── turn 2  [checkpoint: 1 file, 1 folder]\n')
    const dryRun = await rein(p.dir, ['rewind', id, '--to', '1', '--dry-run'], { env })
    expect(dryRun.stdout).toMatch(/^out\/ +already restored +a folder made while `bash: mkdir out && rmdir old` ran$/m)
    expect(dryRun.stdout).toMatch(/^old\/ +restore +an empty folder removed while `bash: mkdir out && rmdir old` ran$/m)
    expect(dryRun.code).toBe(0)
    const rewind = await rein(p.dir, ['rewind', id, '--to', '1'], { env })
    expect(rewind.stdout).toMatch(/^out +moved aside +now at /m)
    expect(rewind.stdout).toMatch(/^old\/ +restored +an empty folder removed while `bash: mkdir out && rmdir old` ran$/m)
    expect(rewind.code).toBe(0)
    expect(readdirSync(p.dir).filter((name) => name !== 'node_modules' && name !== 'no-root.yml' && name !== '.rein').sort()).toEqual(['old'])
    expect(statSync(join(p.dir, 'old')).isDirectory()).toBe(true)
    vi.unstubAllEnvs()
  })

  it('gives back permissions a bash command changed, as --dry-run says, leaves those a person changed since, and tells the model both', async () => {
    const p = await setUp([
      call('b1', 'bash', { command: 'chmod 666 secret.txt && chmod 755 run.sh && echo leaked >> notes.txt && chmod 644 notes.txt', description: 'Change permissions' }),
      answer('changed them'),
    ])
    const env = builtIn(p)
    const files = { 'secret.txt': 0o600, 'run.sh': 0o644, 'notes.txt': 0o600 }
    for (const [name, mode] of Object.entries(files)) {
      writeFileSync(join(p.dir, name), `${name}\n`)
      chmodSync(join(p.dir, name), mode)
    }
    const run = await rein(p.dir, ['run', '--yes', 'change permissions'], { env })
    expect(run.code).toBe(0)
    const id = sessionIdOf(run)
    // A person's chmod after the turn: theirs, not the command's.
    chmodSync(join(p.dir, 'run.sh'), 0o700)
    const modes = () => Object.keys(files).map((name) => statSync(join(p.dir, name)).mode & 0o7777)
    const dryRun = await rein(p.dir, ['rewind', id, '--to', '1', '--dry-run'], { env })
    expect(dryRun.stdout).toMatch(/^secret\.txt +restore +its permissions back to 0600 \(from 0666\); changed while `bash: chmod 666/m)
    expect(dryRun.stdout).toMatch(/^notes\.txt +restore +its permissions back to 0600 \(from 0644\); changed while/m)
    expect(dryRun.stdout).toMatch(/^run\.sh +drifted +its permissions \(0700 now\) left as they are: changed since the rewound commands set 0755; 0644 before; changed while/m)
    expect(dryRun.code).toBe(5)
    expect(modes()).toEqual([0o666, 0o700, 0o644])
    const rewind = await rein(p.dir, ['rewind', id, '--to', '1'], { env })
    expect(rewind.stdout).toMatch(/^secret\.txt +restored +its permissions back to 0600 \(from 0666\)/m)
    expect(rewind.stdout).toMatch(/^notes\.txt +restored +its permissions back to 0600 \(from 0644\)/m)
    expect(rewind.stdout).toMatch(/^run\.sh +drifted +its permissions \(0700 now\) left as they are/m)
    expect(rewind.code).toBe(5)
    expect(modes()).toEqual([0o600, 0o700, 0o600])
    expect(readFileSync(join(p.dir, 'notes.txt'), 'utf8')).toBe('notes.txt\n')
    const notice = (await storedEvents(p, id)).filter((event) => event.type === 'user/message').map((event) => eventData(event, 'user/message').message)
      .filter((message) => message.source?.kind === 'plugin').map((message) => message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''))
    expect(notice).toHaveLength(1)
    expect(notice[0]).toMatch(/^Back as before that turn: (?=.*secret\.txt \(its permissions back to 0600\))(?=.*notes\.txt \(its permissions back to 0600\)).*$/m)
    expect(notice[0]).toContain('\nNot rewound, left as they are now: run.sh (its permissions, which were 0644 before that turn)\n')
    vi.unstubAllEnvs()
  })

  it('says a turn whose bash changes could not be recorded cannot be undone, and exits 5, rather than that there is nothing to rewind', async () => {
    const p = await setUp([
      call('b1', 'bash', { command: 'echo one > one.txt', description: 'Make a file' }),
      answer('made it'),
      // From here the store cannot keep a content (its contents' folder is a file), as on a full
      // disk; its log still takes a line. REIN_HOME is .rein in the workspace.
      call('b2', 'bash', { command: 'for d in .rein/sessions/*.files; do rm -rf "$d/checkpoint-blobs"; echo blocked > "$d/checkpoint-blobs"; done; echo two > two.txt; echo one-changed > one.txt', description: 'Change files' }),
      answer('changed them'),
    ])
    const env = builtIn(p)
    expect(p.home).toBe(join(p.dir, '.rein'))
    const first = await rein(p.dir, ['run', '--yes', 'make a file'], { env })
    expect(first.code).toBe(0)
    const id = sessionIdOf(first)
    const second = await rein(p.dir, ['run', '--yes', '--session', id, 'change files'], { env })
    expect(second.code).toBe(0)
    expect(second.stderr).toContain('could not be recorded')
    expect(readFileSync(join(p.dir, 'two.txt'), 'utf8')).toBe('two\n')
    for (const args of [['--dry-run'], []]) {
      const rewind = await rein(p.dir, ['rewind', id, '--to', '2', ...args], { env })
      expect(rewind.stdout).not.toContain('nothing to rewind')
      expect(rewind.stdout).toMatch(/^ {2}the changes `bash: for d in .*` made could not be recorded \(.*\): they are not undone; /m)
      expect(rewind.stdout).toMatch(/ skipped +not restored: what this command changed could not be recorded /)
      expect(rewind.code).toBe(5)
    }
    // Nothing of turn 2 was undone: its changes were never recorded.
    expect(readFileSync(join(p.dir, 'one.txt'), 'utf8')).toBe('one-changed\n')
    vi.unstubAllEnvs()
  })

  it('records what a background bash job still running when the turn ended changed, so rewind undoes it', async () => {
    const p = await setUp([
      call('b1', 'bash', { command: 'sleep 1; echo late > f.txt; echo bg > bg.txt', description: 'Change files later', run_in_background: true }),
      answer('started it'),
    ])
    const env = builtIn(p)
    writeFileSync(join(p.dir, 'f.txt'), 'orig\n')
    const run = await rein(p.dir, ['run', '--yes', 'change files in the background'], { env })
    expect(run.code).toBe(0)
    expect(run.stderr).toContain('waiting for 1 background job (bash-1) to finish')
    expect(run.stderr).not.toContain('could not be recorded')
    expect(readFileSync(join(p.dir, 'f.txt'), 'utf8')).toBe('late\n')
    const rewind = await rein(p.dir, ['rewind', sessionIdOf(run), '--to', '1'], { env })
    expect(rewind.code).toBe(0)
    expect(readFileSync(join(p.dir, 'f.txt'), 'utf8')).toBe('orig\n')
    expect(existsSync(join(p.dir, 'bg.txt'))).toBe(false)
    vi.unstubAllEnvs()
  })

  it('quotes as JSON file names holding a line break or an escape sequence in its table, so none reads as a row of its own', async () => {
    const p = await setUp([
      call('b1', 'bash', { command: 'printf x > "$(printf \'evil\\nrestored\')"; printf y > "$(printf \'esc\\033[31mred\')"', description: 'Make odd names' }),
      answer('made them'),
    ])
    const env = builtIn(p)
    const run = await rein(p.dir, ['run', '--yes', 'make odd names'], { env })
    expect(run.code).toBe(0)
    expect(existsSync(join(p.dir, 'evil\nrestored'))).toBe(true)
    for (const argv of [['--dry-run'], []]) {
      const rewind = await rein(p.dir, ['rewind', sessionIdOf(run), '--to', '1', ...argv], { env })
      expect(rewind.code).toBe(0)
      const rows = rewind.stdout.split('\n').slice(2, 4)
      expect(rows.map((row) => row.split('  ')[0]).sort((a, b) => String(a).localeCompare(String(b)))).toEqual(['"esc\\u001b[31mred"', '"evil\\nrestored"'])
      expect(rewind.stdout.split('\n')).toHaveLength(8)
      expect(rewind.stdout).not.toContain('^[')
    }
    expect(existsSync(join(p.dir, 'evil\nrestored'))).toBe(false)
    vi.unstubAllEnvs()
  })

  it('finishes a rewind a SIGINT arrives during, exits with its own code and says so, not that a turn was cancelled', async () => {
    const count = 2000
    const p = await setUp([
      call('b1', 'bash', { command: `for i in $(seq 1 ${count}); do echo changed $i > f$i.txt; done`, description: 'Change many files' }),
      answer('changed them'),
    ])
    const env = builtIn(p)
    const files = Array.from({ length: count }, (_, index) => join(p.dir, `f${index + 1}.txt`))
    files.forEach((file, index) => writeFileSync(file, `orig ${index + 1}\n`))
    const run = await rein(p.dir, ['run', '--yes', 'change many files'], { env })
    expect(run.code).toBe(0)
    // SIGINT once the first files are back: the rewind is putting files back then.
    let poll: NodeJS.Timeout | undefined
    const rewind = await spawnRein(p.dir, ['rewind', sessionIdOf(run), '--to', '1'], undefined, env, [], (child) => {
      poll = setInterval(() => {
        if (!files.slice(0, 200).some((file) => readFileSync(file, 'utf8').startsWith('orig'))) return
        clearInterval(poll)
        child.kill('SIGINT')
      }, 10)
    })
    clearInterval(poll)
    expect(rewind.code).toBe(0)
    expect(rewind.stderr).not.toMatch(/turn/)
    expect(rewind.stderr).toContain('SIGINT came during the rewind; it was completed all the same (the result says what became of each file)')
    expect(files.filter((file, index) => readFileSync(file, 'utf8') !== `orig ${index + 1}\n`)).toEqual([])
    vi.unstubAllEnvs()
  }, 120_000)

  it('undoes what a subagent changed with the turn of its parent that delegated it', async () => {
    const task = 'write notes.txt'
    const p = await setUp((request) => {
      const messages = (request.body as { messages?: { role: string; content?: string }[] }).messages ?? []
      const child = messages.some((message) => message.role === 'user' && message.content === task)
      const done = messages.at(-1)?.role === 'tool'
      if (child) return done ? answer('wrote it') : call('w1', 'write', { path: 'notes.txt', content: 'from the subagent\n' })
      return done ? answer('the subagent wrote it') : call('s1', 'subagent', { description: 'write the notes', prompt: task })
    })
    const env = builtIn(p)
    const run = await rein(p.dir, ['run', '--yes', 'delegate a note'], { env })
    expect(run.code).toBe(0)
    expect(run.stderr).toContain('    [tool] ')
    expect(readFileSync(join(p.dir, 'notes.txt'), 'utf8')).toBe('from the subagent\n')
    const rewind = await rein(p.dir, ['rewind', sessionIdOf(run), '--to', '1'], { env })
    expect(rewind.code).toBe(0)
    expect(existsSync(join(p.dir, 'notes.txt'))).toBe(false)
    vi.unstubAllEnvs()
  })
})

