// `rein show` words every event it prints: no line is a bare `(<event type>)`.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CORE_EVENT_TYPES, type CoreEventData, type CoreEventType } from '@rein/session'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, rein, sessionIdOf } from './harness.ts'

const setUp = projectPerTest(afterEach)

const usage = { inputTokens: 10, outputTokens: 2 }
const failure = { code: 'SERVER' as const, message: 'mock returned HTTP 500: boom', status: 500 }
const route = { provider: 'mock', model: 'mock-model' }
const attempt = { ...route, retry: 0, fallback: 0, startedAt: 1, endedAt: 2, shown: false }

/** One event of every core type; typed so a type added to the session package needs a sample here. */
const SAMPLES: { [K in CoreEventType]: CoreEventData[K] } = {
  'turn/start': { turn: 1 },
  'step/start': { turn: 1, step: 1 },
  'llm/progress': { outputChars: 4_000 },
  'request/header': { ...route, systemHash: 'a', toolsHash: 'b' },
  'user/message': { message: { id: 'm1', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } } as never },
  'llm/attempt': { ...attempt, failure },
  'llm/retry': { type: 'retry', ...route, attempt: 1, delayMs: 1_000, failure },
  'llm/resend': { request: route, retry: 1, fallback: 0 },
  'llm/fallback': { type: 'fallback', from: route, to: { provider: 'other', model: 'other-model' }, failure },
  'assistant/message': { message: { id: 'm2', role: 'assistant', content: [{ type: 'text', text: 'calling' }, { type: 'tool-call', id: 'c1', name: 'lookup', arguments: '{}' }], source: { kind: 'model' } } as never, usage, ...route },
  'tool/call': { callId: 'c1', name: 'lookup', arguments: '{}', replaySafe: true },
  'tool/result': { callId: 'c1', content: [{ type: 'text', text: 'found' }], isError: false },
  'step/end': { turn: 1, step: 1 },
  'summary/start': { request: { ...route, maxTokens: 100 }, inputTokens: 50 },
  'context/compacted': { reason: 'manual', tokensBefore: 100, tokensAfter: 50, pruned: [{ callId: 'c1', name: 'lookup', chars: 5 }] },
  'turn/end': { turn: 1, reason: 'completed' },
  'session/forked': { fromSessionId: 'other-session', beforeSeq: 3 },
}

/** As the session package writes them (its list is not exported). */
const IGNORABLE: readonly CoreEventType[] = ['llm/attempt', 'summary/start', 'llm/resend', 'session/forked', 'llm/progress']

function writeSession(root: string, id: string) {
  mkdirSync(root, { recursive: true, mode: 0o700 })
  const header = { kind: 'rein-session', formatVersion: 1, id, createdAt: '2026-01-01T00:00:00.000Z', cwd: root, depth: 0 }
  const events = (Object.keys(SAMPLES) as CoreEventType[]).map((type, seq) => ({ seq, type, time: '2026-01-01T00:00:00.000Z', data: SAMPLES[type], ...(IGNORABLE.includes(type) ? { ignorable: true } : {}) }))
  writeFileSync(join(root, `${id}.jsonl`), `${[header, ...events].map((line) => JSON.stringify(line)).join('\n')}\n`, { mode: 0o600 })
}

describe('rein show words every event type', () => {
  it('has a sample of every core event type', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...CORE_EVENT_TYPES].sort())
  })

  it('prints no event of a session holding every core event type as a bare (type)', async () => {
    const p = await setUp([])
    const id = '11111111-2222-3333-4444-555555555555'
    writeSession(join(p.home, 'sessions'), id)
    const shown = await rein(p.dir, ['show', id])
    expect(shown.stderr).toBe('')
    expect(shown.code).toBe(0)
    for (const type of CORE_EVENT_TYPES) expect(shown.stdout).not.toContain(`(${type})`)
    expect(shown.stdout).not.toMatch(/^\s*\([a-z-]+\/[a-z-]+\)\s*$/m)
    expect(shown.stdout).toContain('\n  · retry 1 after SERVER (HTTP 500), waited 1.0 s · mock/mock-model · mock returned HTTP 500: boom\n')
    expect(shown.stdout).toContain('\n  · fallback mock/mock-model → other/other-model after SERVER (HTTP 500) · mock returned HTTP 500: boom\n')
  })
})

describe('rein show of a turn whose request was retried', () => {
  it('words the retry after an HTTP 500, not (llm/retry)', async () => {
    const p = await setUp([{ kind: 'error', status: 500, message: 'upstream broke' }, { steps: [{ text: 'answered' }] }])
    const run = await rein(p.dir, ['run', 'hi'], { env: { REIN_HOME: p.home } })
    expect(run.code).toBe(0)
    const shown = await rein(p.dir, ['show', sessionIdOf(run)], { env: { REIN_HOME: p.home } })
    expect(shown.code).toBe(0)
    expect(shown.stdout).not.toContain('(llm/retry)')
    expect(shown.stdout).toMatch(/\n {2}· retry 1 after SERVER \(HTTP 500\), waited 0\.0 s · mock\/mock-model · [^\n]*upstream broke[^\n]*\n/)
  })

  it('masks the value of a secret-named variable a server echoed into a retry line', async () => {
    const secret = 'hunter2hunter2xyz'
    const p = await setUp([{ kind: 'error', status: 500, message: `upstream broke near ${secret}` }, { steps: [{ text: 'answered' }] }])
    const env = { REIN_HOME: p.home, OTHER_TOKEN: secret }
    const run = await rein(p.dir, ['run', 'hi'], { env })
    const shown = await rein(p.dir, ['show', sessionIdOf(run)], { env })
    expect(shown.stdout).toContain('upstream broke near ***')
    expect(shown.stdout + shown.stderr).not.toContain(secret)
  })
})

describe('rein show of a run killed during a retry\'s backoff', () => {
  const id = '22222222-3333-4444-5555-666666666666'
  const message = (role: string, text: string) => ({ message: { id: `${role}-${text}`, role, content: [{ type: 'text', text }], source: role === 'user' ? { kind: 'user' } : { kind: 'model' } } })
  /** Turn 1: a 500, then a retry planned 20 s out, and the process killed 0.5 s into the wait. */
  const killedInWait: [CoreEventType, unknown][] = [
    ['turn/start', { turn: 1 }],
    ['user/message', message('user', 'task')],
    ['step/start', { turn: 1, step: 1 }],
    ['llm/attempt', { ...attempt, failure }],
    ['llm/retry', { type: 'retry', ...route, attempt: 1, delayMs: 20_000, failure }],
  ]
  /** What `rein resume` then adds: the repair's ends of turn 1, and a turn 2 whose retry waited and answered. */
  const resumed: [CoreEventType, unknown][] = [
    ['step/end', { turn: 1, step: 1 }],
    ['turn/end', { turn: 1, reason: 'interrupted' }],
    ['turn/start', { turn: 2 }],
    ['step/start', { turn: 2, step: 1 }],
    ['llm/attempt', { ...attempt, failure }],
    ['llm/retry', { type: 'retry', ...route, attempt: 1, delayMs: 20_000, failure }],
    ['llm/resend', { request: route, retry: 1, fallback: 0 }],
    ['llm/attempt', { ...attempt, retry: 1, shown: true, finishReason: 'stop', usage }],
    ['assistant/message', { ...message('assistant', 'final'), usage, ...route }],
    ['step/end', { turn: 2, step: 1 }],
    ['turn/end', { turn: 2, reason: 'completed' }],
  ]

  function writeLog(root: string, data: [CoreEventType, unknown][]) {
    mkdirSync(root, { recursive: true, mode: 0o700 })
    const header = { kind: 'rein-session', formatVersion: 1, id, createdAt: '2026-01-01T00:00:00.000Z', cwd: root, depth: 0 }
    const events = data.map(([type, event], seq) => ({ seq, type, time: '2026-01-01T00:00:00.000Z', data: event, ...(IGNORABLE.includes(type) ? { ignorable: true } : {}) }))
    writeFileSync(join(root, `${id}.jsonl`), `${[header, ...events].map((line) => JSON.stringify(line)).join('\n')}\n`, { mode: 0o600 })
  }

  it('does not say the retry waited 20 s when the turn ended during the wait', async () => {
    const p = await setUp([])
    writeLog(join(p.home, 'sessions'), [...killedInWait, ...resumed])
    const shown = await rein(p.dir, ['show', id], { env: { REIN_HOME: p.home } })
    expect(shown.code).toBe(0)
    const retries = shown.stdout.split('\n').filter((line) => line.startsWith('  · retry 1 after'))
    expect(retries).toEqual([
      '  · retry 1 after SERVER (HTTP 500), was to wait 20.0 s; the turn ended during the wait · mock/mock-model · mock returned HTTP 500: boom',
      '  · retry 1 after SERVER (HTTP 500), waited 20.0 s · mock/mock-model · mock returned HTTP 500: boom',
    ])
  })

  it('does not say the retry waited 20 s when the log ends during the wait', async () => {
    const p = await setUp([])
    writeLog(join(p.home, 'sessions'), killedInWait)
    const shown = await rein(p.dir, ['show', id], { env: { REIN_HOME: p.home } })
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain('\n  · retry 1 after SERVER (HTTP 500), was to wait 20.0 s; the log ends during the wait · mock/mock-model · mock returned HTTP 500: boom\n')
  })
})

describe('rein show of a call whose arguments hold a key the model wrote', () => {
  it('masks the key-shaped text in the call line, as run and chat do, not only an environment secret', async () => {
    const p = await setUp([])
    const id = '11111111-2222-3333-4444-666666666666'
    const root = join(p.home, 'sessions')
    mkdirSync(root, { recursive: true, mode: 0o700 })
    const key = `ghp_${'a1B2c3D4e5'.repeat(4)}`
    const header = { kind: 'rein-session', formatVersion: 1, id, createdAt: '2026-01-01T00:00:00.000Z', cwd: root, depth: 0 }
    const call = { callId: 'c1', name: 'lookup', arguments: JSON.stringify({ token: key }), replaySafe: true }
    const events = [['turn/start', { turn: 1 }], ['tool/call', call], ['tool/result', { callId: 'c1', content: [{ type: 'text', text: 'found' }], isError: false }], ['turn/end', { turn: 1, reason: 'completed' }]]
      .map(([type, data], seq) => ({ seq, type, time: '2026-01-01T00:00:00.000Z', data }))
    writeFileSync(join(root, `${id}.jsonl`), `${[header, ...events].map((line) => JSON.stringify(line)).join('\n')}\n`, { mode: 0o600 })
    const shown = await rein(p.dir, ['show', id])
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain('→ lookup')
    expect(shown.stdout).not.toContain(key.slice(0, 12))
  })
})
