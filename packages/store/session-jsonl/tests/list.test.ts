import { spawnSync } from 'node:child_process'
import { appendFile, mkdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SessionEvent, SessionHeader } from '@rein/session'
import { describe, expect, it } from 'vitest'
import { JsonlSessionStore } from '../src/index.ts'
import { SUMMARIES_FILE } from '../src/summary-cache.ts'
import { event, header, userMessage } from './fixtures/sessions.ts'
import { tempRoot } from './temp-root.ts'

async function stored(store: JsonlSessionStore, sessionHeader: SessionHeader, events: SessionEvent[]) {
  await store.create(sessionHeader)
  await store.append(sessionHeader.id, events)
  await store.close(sessionHeader.id)
}

describe('JsonlSessionStore.list', () => {
  it('summarizes every rein session, most recent first, skipping foreign and corrupt files', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await stored(store, header('older'), [
      event(0, 'turn/start', { turn: 0 }, '2026-01-02T00:00:00.000Z'),
      userMessage(1, 'fix the flaky test in the parser please', '2026-01-02T00:00:01.000Z'),
      event(2, 'turn/end', { turn: 0, reason: 'completed' }, '2026-01-02T00:00:02.000Z'),
      event(3, 'turn/start', { turn: 1 }, '2026-01-02T00:00:03.000Z'),
      userMessage(4, 'and now the lexer', '2026-01-02T00:00:04.000Z'),
    ])
    await stored(store, header('newer', { parentSessionId: 'older', depth: 1, cwd: '/repo' }), [
      event(0, 'turn/start', { turn: 0 }, '2026-01-03T00:00:00.000Z'),
      userMessage(1, 'one two three four five six seven eight nine ten eleven twelve thirteen', '2026-01-03T00:00:01.000Z'),
    ])
    await writeFile(join(root, 'foreign.jsonl'), '{"some":"other tool"}\n')
    await writeFile(join(root, 'broken.jsonl'), `${JSON.stringify({ kind: 'rein-session', ...header('broken') })}\nnot json\n{}\n`)
    await writeFile(join(root, 'notes.txt'), 'not a session')
    await mkdir(join(root, 'folder.jsonl'))

    expect(await store.list()).toEqual([
      {
        id: 'newer',
        createdAt: '2026-01-01T00:00:00.000Z',
        cwd: '/repo',
        title: 'one two three four five six seven eight nine ten eleven twelve…',
        turns: 1,
        status: 'needs-repair',
        usage: { inputTokens: 0, outputTokens: 0 },
        lastActivity: '2026-01-03T00:00:01.000Z',
        depth: 1,
        parentSessionId: 'older',
      },
      {
        id: 'older',
        createdAt: '2026-01-01T00:00:00.000Z',
        cwd: '/work',
        title: 'fix the flaky test in the parser please',
        turns: 2,
        status: 'needs-repair',
        usage: { inputTokens: 0, outputTokens: 0 },
        lastActivity: '2026-01-02T00:00:04.000Z',
        depth: 0,
      },
    ])
  })

  it('tells each session\'s status, model, tokens and cost (issue #8)', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    const attempt = (seq: number, cost?: number) => event(seq, 'llm/attempt', { provider: 'p', model: 'm1', retry: 0, fallback: 0, startedAt: 0, endedAt: 1, shown: true, usage: { inputTokens: 10, outputTokens: 5 }, ...(cost !== undefined ? { cost } : {}) })
    await stored(store, header('done'), [
      event(0, 'turn/start', { turn: 1 }),
      event(1, 'request/header', { provider: 'p', model: 'm1', systemHash: 'a', toolsHash: 'b' }),
      attempt(2, 0.5),
      attempt(3, 0.25),
      event(4, 'turn/end', { turn: 1, reason: 'completed' }),
    ])
    await stored(store, header('cut'), [event(0, 'turn/start', { turn: 1 }), attempt(1), event(2, 'turn/end', { turn: 1, reason: 'interrupted' })])
    await stored(store, header('crashed'), [event(0, 'turn/start', { turn: 1 })])
    const byId = Object.fromEntries((await store.list()).map((summary) => [summary.id, summary]))
    expect(byId.done).toMatchObject({ status: 'completed', model: 'm1', usage: { inputTokens: 20, outputTokens: 10 }, cost: 0.75 })
    expect(byId.cut).toMatchObject({ status: 'interrupted', usage: { inputTokens: 10, outputTokens: 5 } })
    expect(byId.cut!.cost).toBeUndefined()
    expect(byId.crashed).toMatchObject({ status: 'needs-repair' })
    await store.open('crashed')
    expect((await store.list()).find((summary) => summary.id === 'crashed')).toMatchObject({ status: 'running' })
    await store.close('crashed')
  })

  it('tells of a log whose file name is no session id (a copy saved by hand) rather than hide it, and passes over hidden files', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await stored(store, header('s1'), [event(0)])
    await writeFile(join(root, 'copy of s1.jsonl'), await readFile(join(root, 's1.jsonl')))
    await writeFile(join(root, '.hidden.jsonl'), 'not a session')
    const unreadable: [string, unknown][] = []
    expect((await store.list({ unreadable: (id, error) => unreadable.push([id, error]) })).map((summary) => summary.id)).toEqual(['s1'])
    expect(unreadable).toMatchObject([['copy of s1', { code: 'INVALID_SESSION_ID' }]])
  })

  it('flags a log holding an event of the wrong shape (valid JSON that opening refuses) instead of listing it as a normal session', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await stored(store, header('fine'), [event(0, 'turn/start', { turn: 0 }), userMessage(1, 'a fine task'), event(2, 'turn/end', { turn: 0, reason: 'completed' })])
    const lines = (id: string, events: SessionEvent[]) => [{ kind: 'rein-session', ...header(id) }, ...events].map((item) => `${JSON.stringify(item)}\n`).join('')
    // A tool/result without its fields; a turn/end whose data is null, which summarizing alone would trip on.
    await writeFile(join(root, 'shapeless.jsonl'), lines('shapeless', [event(0, 'turn/start', { turn: 0 }), userMessage(1, 'bad result'), event(2, 'tool/result', {}), event(3, 'turn/end', { turn: 0, reason: 'completed' })]))
    await writeFile(join(root, 'nulled.jsonl'), lines('nulled', [event(0, 'turn/start', { turn: 0 }), event(1, 'turn/end', null)]))
    for (const pass of ['read', 'again, with a summary file']) {
      const unreadable: [string, unknown][] = []
      const listed = await store.list({ unreadable: (id, error) => unreadable.push([id, error]) })
      expect({ pass, ids: listed.map((summary) => summary.id) }).toEqual({ pass, ids: ['fine'] })
      expect(unreadable.sort(([a], [b]) => a.localeCompare(b))).toMatchObject([
        ['nulled', { code: 'SESSION_CORRUPT', details: { file: join(root, 'nulled.jsonl'), seq: 1, type: 'turn/end' } }],
        ['shapeless', { code: 'SESSION_CORRUPT', details: { file: join(root, 'shapeless.jsonl'), seq: 2, type: 'tool/result' } }],
      ])
      expect((unreadable[1]![1] as Error).message).toContain('data.callId')
    }
  })

  it('lists nothing when the root does not exist yet', async () => {
    expect(await new JsonlSessionStore({ root: join(await tempRoot(), 'missing') }).list()).toEqual([])
  })

  it('lists every one of many sessions under a low open-file limit: it does not open them all at once', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    for (let index = 0; index < 150; index++) await stored(store, header(`s${index}`), [userMessage(0, `task ${index}`, '2026-01-02T00:00:00.000Z')])
    await store.dispose()
    const script = fileURLToPath(new URL('fixtures/list-past-fd-limit.ts', import.meta.url))
    const child = spawnSync('sh', ['-c', `ulimit -n 64 && exec "${process.execPath}" --conditions=@rein/source --import tsx "${script}" "${root}"`], { encoding: 'utf8' })
    expect(child.stderr).toBe('')
    expect(JSON.parse(child.stdout)).toEqual({ listed: 150, errors: [] })
  }, 60_000)
})

describe('JsonlSessionStore.list, from what an earlier list summarized', () => {
  const turn = (text: string, time: string) => [event(0, 'turn/start', { turn: 1 }, time), userMessage(1, text, time), event(2, 'turn/end', { turn: 1, reason: 'completed' }, time)]

  it('does not read a log again while its size, time and file are as they were when it was summarized', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await stored(store, header('kept'), turn('summarize me once', '2026-01-02T00:00:00.000Z'))
    // A whole-millisecond time, which utimes can put back exactly.
    const file = join(root, 'kept.jsonl')
    const when = new Date('2026-01-02T00:00:01.000Z')
    await utimes(file, when, when)
    const first = await store.list()
    // The same number of bytes and the same time, other bytes: only a list that reads the log again sees them.
    const { size } = await stat(file)
    await writeFile(file, 'x'.repeat(size), { flag: 'r+' })
    await utimes(file, when, when)
    expect(await store.list()).toEqual(first)
    // Grown: read again (and now found damaged).
    await appendFile(file, '\n')
    const unreadable: string[] = []
    expect(await store.list({ unreadable: (id) => unreadable.push(id) })).toEqual([])
    expect(unreadable).toEqual(['kept'])
  })

  it('summarizes a log again once it changed, and drops a session whose log is gone', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await stored(store, header('grows'), turn('first task', '2026-01-02T00:00:00.000Z'))
    await stored(store, header('goes'), turn('short-lived', '2026-01-02T00:00:00.000Z'))
    expect((await store.list()).map((summary) => [summary.id, summary.turns])).toEqual([['goes', 1], ['grows', 1]])
    await store.open('grows')
    await store.append('grows', [event(3, 'turn/start', { turn: 2 }, '2026-01-03T00:00:00.000Z'), event(4, 'turn/end', { turn: 2, reason: 'completed' }, '2026-01-03T00:00:00.000Z')])
    await store.close('grows')
    await rm(join(root, 'goes.jsonl'))
    expect((await store.list()).map((summary) => [summary.id, summary.turns, summary.status])).toEqual([['grows', 2, 'completed']])
    expect(Object.keys(JSON.parse(await readFile(join(root, SUMMARIES_FILE), 'utf8')).sessions)).toEqual(['grows'])
  })

  it('lists a session open somewhere as running, whatever it summarized before', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await stored(store, header('busy'), turn('a task', '2026-01-02T00:00:00.000Z'))
    expect(await store.list()).toMatchObject([{ id: 'busy', status: 'completed' }])
    await store.open('busy')
    expect(await new JsonlSessionStore({ root }).list()).toMatchObject([{ id: 'busy', status: 'running' }])
    await store.close('busy')
    expect(await store.list()).toMatchObject([{ id: 'busy', status: 'completed' }])
  })

  it('does not list as healthy through ctx.sessions a log holding an event type no loaded plugin defines, which show and resume refuse', async () => {
    const { Context } = await import('@deepseek-ai/cordis')
    const { default: SessionService } = await import('@rein/session')
    const plugin = await import('../src/index.ts')
    const root = await tempRoot()
    const ctx = new Context()
    await ctx.plugin(SessionService)
    await ctx.plugin(plugin, { root })
    const plans = await ctx.plugin({ name: 'plans', inject: ['sessions'], apply: (inner: typeof ctx) => { inner.sessions.defineEvent('plans/step') } })
    const notes = await ctx.plugin({ name: 'notes', inject: ['sessions'], apply: (inner: typeof ctx) => { inner.sessions.defineEvent('notes/seen', { ignorable: true }) } })
    for (const [id, type] of [['planned', 'plans/step'], ['noted', 'notes/seen']] as const) {
      const session = await ctx.sessions.create({ id, cwd: '/w' })
      session.append('turn/start', { turn: 0 })
      session.append(type, { n: 1 })
      session.append('turn/end', { turn: 0, reason: 'completed' })
      await session.close()
    }
    const listedIds = async () => {
      const unreadable: [string, unknown][] = []
      const ids = (await ctx.sessions.list({ unreadable: (id, error) => unreadable.push([id, error]) })).map((summary) => summary.id).sort()
      return { ids, unreadable }
    }
    expect(await listedIds()).toEqual({ ids: ['noted', 'planned'], unreadable: [] })
    await plans.dispose()
    await notes.dispose()
    // Twice: once reading the logs, once from the summaries file that read wrote.
    await rm(join(root, SUMMARIES_FILE))
    for (const pass of ['read', 'kept']) {
      const { ids, unreadable } = await listedIds()
      expect({ pass, ids }).toEqual({ pass, ids: ['noted'] })
      expect(unreadable).toMatchObject([['planned', { code: 'SESSION_UNKNOWN_EVENT', details: { type: 'plans/step' } }]])
      expect((unreadable[0]![1] as Error).message).toBe('session planned has events of type "plans/step", which no loaded plugin defines; load the plugin that wrote them')
    }
    await expect(ctx.sessions.load('planned')).rejects.toMatchObject({ code: 'SESSION_UNKNOWN_EVENT' })
    // The log is not damaged: loading the plugin lists and opens it again.
    await ctx.plugin({ name: 'plans', inject: ['sessions'], apply: (inner: typeof ctx) => { inner.sessions.defineEvent('plans/step') } })
    expect(await listedIds()).toEqual({ ids: ['noted', 'planned'], unreadable: [] })
    const summaries = await new JsonlSessionStore({ root }).list()
    expect(summaries.find((summary) => summary.id === 'planned')).toMatchObject({ requires: ['plans/step'] })
    expect(summaries.find((summary) => summary.id === 'noted')).not.toHaveProperty('requires')
  })

  /**
   * A store whose cache holds, from summary format `format`, an empty summary of session `id` (one
   * `event`) stamped as its log is now, beside a healthy session `fine`: what an older rein left.
   */
  async function summarizedByOlderRein(id: string, logged: ReturnType<typeof event>, format: number) {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await stored(store, header('fine'), turn('a fine task', '2026-01-02T00:00:00.000Z'))
    await store.list()
    const cache = join(root, SUMMARIES_FILE)
    const { version } = JSON.parse(await readFile(cache, 'utf8')) as { version: string }
    const file = join(root, `${id}.jsonl`)
    await writeFile(file, [{ kind: 'rein-session', ...header(id) }, logged].map((item) => `${JSON.stringify(item)}\n`).join(''))
    const { size, mtimeMs, ino } = await stat(file)
    const summary = { id, createdAt: '2026-01-01T00:00:00.000Z', cwd: '/work', turns: 0, status: 'empty', usage: { inputTokens: 0, outputTokens: 0 }, lastActivity: '2026-01-01T00:00:00.000Z', depth: 0 }
    await writeFile(cache, JSON.stringify({ version: version.replace(/^\d+:/, `${format}:`), sessions: { [id]: { size, mtimeMs, ino, summary } } }))
    return { store }
  }

  it('reads again a log an older rein summarized without noting the plugin event types it needs', async () => {
    // What a list of summary format 2 kept of it: no `requires`, so it looked like any other session.
    const { store } = await summarizedByOlderRein('planned', event(0, 'plans/step', { n: 1 }), 2)
    expect((await store.list()).find((listed) => listed.id === 'planned')).toMatchObject({ requires: ['plans/step'] })
  })

  it('reads again a log an older rein summarized without checking its events\' shapes, and flags it', async () => {
    // What the list before shape checks kept of it: a summary that matches the log's stamp.
    const { store } = await summarizedByOlderRein('shapeless', event(0, 'tool/result', {}), 1)
    const unreadable: string[] = []
    expect((await store.list({ unreadable: (id) => unreadable.push(id) })).map((listed) => listed.id)).toEqual(['fine'])
    expect(unreadable).toEqual(['shapeless'])
  })

  it('keeps what it summarized private (titles are prompts), and reads the logs again when that file is damaged or from another version', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await stored(store, header('private'), turn('a secret plan', '2026-01-02T00:00:00.000Z'))
    const listed = await store.list()
    const cache = join(root, SUMMARIES_FILE)
    expect((await stat(cache)).mode & 0o777).toBe(0o600)
    for (const damage of ['not json', '{"version":-1,"sessions":{"private":{"size":1,"mtimeMs":1,"ino":1,"summary":{"id":"private","title":"stale"}}}}', '{"version":1,"sessions":[]}', '[]']) {
      await writeFile(cache, damage)
      expect(await store.list()).toEqual(listed)
    }
  })
})
