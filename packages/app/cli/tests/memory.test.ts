// Memory across sessions in the CLI (issue #12 §3–4): what the model saves reaches the next
// session's prompt, a resume replays its own block, and `rein memory` shows and fixes the entries.
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { MemoryEntry } from '@rein/memory'
import { SqliteMemoryStore } from '@rein/memory-sqlite'
import type { MockReply, RecordedRequest } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { chatTerminal, NO_HOME, projectPerTest, rein, sessionIdOf, type Project } from './harness.ts'

const setUp = projectPerTest(afterEach)

/** A project (harness.ts) whose cordis.yml also has the memory rows, the database in its own home. */
async function memoryProject(script: Parameters<typeof setUp>[0], agent?: Record<string, unknown>): Promise<Project> {
  const rows = ['- id: memory', "  name: '@rein/memory'", '- id: memory-store', "  name: '@rein/memory-sqlite'", '  config: { file: MEMORY_FILE }']
  const p = await setUp(script, { extraRows: rows, ...(agent === undefined ? {} : { agent }) })
  const file = join(p.dir, 'cordis.yml')
  writeFileSync(file, readFileSync(file, 'utf8').replace('MEMORY_FILE', `'${join(p.home, 'memory.db')}'`))
  return p
}

interface WireMessage { role: string; content?: string | null }
const messagesOf = (request: RecordedRequest | undefined) => (request?.body as { messages?: WireMessage[] } | undefined)?.messages ?? []
const systemOf = (request: RecordedRequest | undefined) => messagesOf(request).find((message) => message.role === 'system')?.content ?? ''

/** "remember: <text> as <scope> <type>" makes the model save it; anything else is answered "ok". */
function rememberingModel(request: RecordedRequest): MockReply {
  const messages = messagesOf(request)
  const last = messages.at(-1)
  if (last?.role === 'tool') return { steps: [{ text: 'Saved.' }] }
  const match = /^remember: (.+) as (user|project) (\w+)$/.exec(last?.content ?? '')
  if (!match) return { steps: [{ text: 'ok' }] }
  const [, content, scope, type] = match
  return { steps: [{ toolCall: { id: `write-${messages.length}`, name: 'memory_write', arguments: JSON.stringify({ scope, type, content }) } }] }
}

describe('memory across sessions', () => {
  it('does not tell the person to rerun with a flag for a call that would be refused anyway (a key in memory_write)', async () => {
    const p = await memoryProject(rememberingModel)
    const config = join(p.dir, 'cordis.yml')
    const run = await rein(p.dir, ['--config', config, 'run', 'remember: the key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789 as project decision'])
    expect(run.code).toBe(0)
    expect(run.stderr).toContain('failed INVALID_ARGS')
    expect(run.stderr).not.toContain('rerun with')
  })

  it('does not print a key-like text or the whole argument blob of a memory_write call whose arguments fail validation', async () => {
    const keys = ['sk-live-ABCDEF0123456789abcdefXYZ', 'ghp_0123456789abcdefghijABCDEFGHIJ0123', 'AKIAABCDEFGHIJ012345']
    const filler = 'lorem ipsum '.repeat(30)
    // `scope: "team"` and an extra field fail the schema: the tool's own card (which masks keys) is never asked for.
    const args = { scope: 'team', type: 'fact', content: `deploy with ${keys[0]} and ${keys[1]} ${filler}`, note: keys[2] }
    const p = await memoryProject([
      { steps: [{ toolCall: { id: 'w1', name: 'memory_write', arguments: JSON.stringify(args) } }] },
      { steps: [{ text: 'ok' }] },
    ])
    const run = await rein(p.dir, ['--config', join(p.dir, 'cordis.yml'), 'run', '--allow', 'write', 'remember the deploy key'])
    expect(run.code).toBe(0)
    const line = run.stderr.split('\n').find((text) => text.includes('[tool] memory_write'))
    expect(line).toBeDefined()
    expect(line).toMatch(/failed INVALID_ARGS$/)
    for (const key of keys) expect(run.stderr).not.toContain(key.slice(0, 12))
    expect(line).not.toContain('lorem ipsum lorem ipsum lorem ipsum')
    expect(line!.length).toBeLessThan(140)
  })

  it('puts what one session saved into the next session\'s prompt, and a resume replays the block its log recorded', async () => {
    const p = await memoryProject(rememberingModel)
    const config = join(p.dir, 'cordis.yml')

    const first = await rein(p.dir, ['--config', config, 'run', '--allow', 'write', 'remember: Tests use vitest. as project decision'])
    expect(first).toMatchObject({ code: 0, stdout: 'Saved.\n' })
    expect(first.stderr).toContain('[tool] Remember (project, ')
    const a = sessionIdOf(first)
    const systemA = systemOf(p.server.requests[0])
    expect(systemA).not.toContain('## What you remember')
    expect(existsSync(join(p.home, 'memory.db'))).toBe(true)
    expect(existsSync(join(NO_HOME, 'memory.db'))).toBe(false)

    // A new session: the entry is in its first request's system prompt, under the block's heading.
    const second = await rein(p.dir, ['--config', config, 'run', 'what do you know?'])
    expect(second).toMatchObject({ code: 0, stdout: 'ok\n' })
    const b = sessionIdOf(second)
    const systemB = systemOf(p.server.requests.at(-1))
    expect(systemB).toMatch(/## What you remember\n\n.*\n\n- decision \(project\): Tests use vitest\. \[mem_[\w-]{12}, \d{4}-\d\d-\d\d\]/)

    // A second memory, written between the sessions and their resumes. User memory follows the
    // person into every project: allowing writes is not enough, it takes --yes (or a person).
    const refused = await rein(p.dir, ['--config', config, 'run', '--allow', 'write', 'remember: Prefers short answers. as user preference'])
    expect(refused.code).toBe(0)
    expect(refused.stderr).toContain('failed DENIED')
    expect(refused.stderr).toContain('memory_write was denied: it saves to user memory, which every project\'s sessions read: "Prefers short answers."; to allow it, rerun with --yes')
    const third = await rein(p.dir, ['--config', config, 'run', '--yes', 'remember: Prefers short answers. as user preference'])
    expect(third.code).toBe(0)
    expect(systemOf(p.server.requests.at(-2))).toContain('Tests use vitest.')

    // Each resume replays the block its own log recorded, not a fresh recall.
    const resumedA = await rein(p.dir, ['--config', config, 'resume', a, 'and now?'])
    expect(resumedA).toMatchObject({ code: 0, stdout: 'ok\n' })
    expect(systemOf(p.server.requests.at(-1))).toBe(systemA)
    const resumedB = await rein(p.dir, ['--config', config, 'resume', b, 'and now?'])
    expect(resumedB).toMatchObject({ code: 0, stdout: 'ok\n' })
    const systemResumedB = systemOf(p.server.requests.at(-1))
    expect(systemResumedB).toBe(systemB)
    expect(systemResumedB).not.toContain('Prefers short answers.')

    // What `rein memory list` shows is what the sessions saved.
    const list = await rein(p.dir, ['--config', config, 'memory', 'list'])
    expect(list).toMatchObject({ code: 0, stderr: '' })
    expect(list.stdout).toMatch(/^mem_[\w-]{12} {2}user {5}preference {2}just now {2}Prefers short answers\.\nmem_[\w-]{12} {2}project {2}decision {4}just now {2}Tests use vitest\.\n$/)
  })
})

describe('scopes from the agent\'s options', () => {
  it('an agent row with memory {read: [project], write: []} gives the model only memory_search and only project entries', async () => {
    const p = await memoryProject([{ steps: [{ text: 'ok' }] }], { memory: { read: ['project'], write: [] } })
    const store = await SqliteMemoryStore.open({ file: join(p.home, 'memory.db') })
    const source = { sessionId: 'session-0' }
    await store.insert({ id: 'mem_user00000001', scope: 'user', type: 'preference', content: 'Prefers short answers.', source, createdAt: 1, updatedAt: 1 })
    await store.insert({ id: 'mem_here00000001', scope: 'project', projectId: realpathSync(p.dir), type: 'decision', content: 'Tests use vitest.', source, createdAt: 1, updatedAt: 1 })
    await store.close()
    const run = await rein(p.dir, ['--config', join(p.dir, 'cordis.yml'), 'run', 'hi'])
    expect(run).toMatchObject({ code: 0, stdout: 'ok\n' })
    const request = p.server.requests.at(-1)
    const body = request?.body as { tools?: { function: { name: string } }[] } | undefined
    const tools = (body?.tools ?? []).map((tool) => tool.function.name)
    expect(tools.filter((name) => name.startsWith('memory_'))).toEqual(['memory_search'])
    expect(systemOf(request)).toContain('- decision (project): Tests use vitest.')
    expect(systemOf(request)).not.toContain('Prefers short answers.')
  })
})

const DAY = 24 * 60 * 60 * 1000

describe('rein memory', () => {
  /** A project whose memory holds a known set of entries: live, retired, expired, another project's. */
  async function seeded(): Promise<{ p: Project; here: string; entries: MemoryEntry[] }> {
    const p = await memoryProject([{ steps: [{ text: 'unused' }] }])
    const here = realpathSync(p.dir)
    const now = Date.now()
    const source = { sessionId: 'session-1' }
    const long = `Release steps: ${'bump the version, tag it, '.repeat(8)}push.`
    const entries: MemoryEntry[] = [
      { id: 'mem_user00000001', scope: 'user', type: 'preference', content: 'Prefers short answers.', source, createdAt: now - 3 * DAY, updatedAt: now - 3 * DAY },
      { id: 'mem_here00000001', scope: 'project', projectId: here, type: 'decision', content: 'Tests use vitest,\nnot jest.', source, createdAt: now - 2 * DAY, updatedAt: now - 2 * DAY, supersedes: 'mem_here00000000' },
      { id: 'mem_here00000000', scope: 'project', projectId: here, type: 'decision', content: 'Tests use jest.', source, createdAt: now - 5 * DAY, updatedAt: now - 5 * DAY, retiredAt: now - 2 * DAY, retiredBy: 'mem_here00000001' },
      { id: 'mem_here00000002', scope: 'project', projectId: here, type: 'procedure', content: long, source, createdAt: now - 2 * 60 * 60 * 1000, updatedAt: now - 2 * 60 * 60 * 1000 },
      { id: 'mem_else00000001', scope: 'project', projectId: '/elsewhere/other', type: 'fact', content: 'Deploys go through staging.', source, createdAt: now - DAY, updatedAt: now - DAY },
      { id: 'mem_user00000002', scope: 'user', type: 'fact', content: 'On holiday until Monday.', source, createdAt: now - 10 * DAY, updatedAt: now - 10 * DAY, expiresAt: now - DAY },
    ]
    const store = await SqliteMemoryStore.open({ file: join(p.home, 'memory.db') })
    for (const entry of entries) await store.insert(entry)
    await store.close()
    return { p, here, entries }
  }

  it('lists the user\'s and this project\'s live entries, one readable line each; --all adds the rest, marked', async () => {
    const { p, here, entries } = await seeded()
    // Cut to one line of 100 characters, the last an ellipsis.
    const long = entries.find((entry) => entry.id === 'mem_here00000002')!.content
    expect(long.length).toBeGreaterThan(100)
    const list = await rein(p.dir, ['memory', 'list'])
    expect(list.code).toBe(0)
    expect(list.stdout).toBe([
      'mem_user00000001  user     preference  3 days ago   Prefers short answers.',
      `mem_here00000002  project  procedure   2 hours ago  ${long.slice(0, 99)}…`,
      'mem_here00000001  project  decision    2 days ago   Tests use vitest, not jest.',
      '',
    ].join('\n'))
    expect(list.stderr).toBe('(3 more: retired, expired or other projects\'; rein memory list --all shows them)\n')

    const all = await rein(p.dir, ['memory', 'list', '--all'])
    expect(all).toMatchObject({ code: 0, stderr: '' })
    const expired = new Date(Date.now() - DAY).toISOString().slice(0, 10)
    expect(all.stdout.split('\n')).toEqual([
      'mem_user00000001  user     preference  3 days ago   Prefers short answers.',
      `mem_user00000002  user     fact        10 days ago  [expired ${expired}] On holiday until Monday.`,
      `mem_here00000002  project  procedure   2 hours ago  ${long.slice(0, 99)}…`,
      'mem_here00000001  project  decision    2 days ago   Tests use vitest, not jest.',
      'mem_here00000000  project  decision    5 days ago   [retired: mem_here00000001 corrects it] Tests use jest.',
      'mem_else00000001  project  fact        1 day ago    [project /elsewhere/other] Deploys go through staging.',
      '',
    ])

    const json = await rein(p.dir, ['memory', 'list', '--json'])
    const parsed = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as MemoryEntry)
    expect(parsed.map((entry) => entry.id)).toEqual(['mem_user00000001', 'mem_here00000002', 'mem_here00000001'])
    expect(parsed[2]).toMatchObject({ scope: 'project', projectId: here, content: 'Tests use vitest,\nnot jest.' })
  })

  it('searches the user\'s and this project\'s live entries, best match first', async () => {
    const { p } = await seeded()
    const found = await rein(p.dir, ['memory', 'search', 'vitest', 'tests'])
    expect(found).toMatchObject({ code: 0, stderr: '', stdout: 'mem_here00000001  project  decision  2 days ago  Tests use vitest, not jest.\n' })
    // Another project's entry, and a retired one, are not found from here.
    const elsewhere = await rein(p.dir, ['memory', 'search', 'staging'])
    expect(elsewhere).toMatchObject({ code: 0, stdout: '' })
    expect(elsewhere.stderr).toMatch(/^no memories match "staging" \(user, or project .+\)\n$/)
    const json = await rein(p.dir, ['memory', 'search', '--json', 'short answers'])
    expect(json.stdout.trim().split('\n').map((line) => (JSON.parse(line) as MemoryEntry).id)).toEqual(['mem_user00000001'])
  })

  it('forgets one entry by id (--json: the entry as one JSON line, not text), and refuses an unknown id with exit 2', async () => {
    const { p, here } = await seeded()
    const forgot = await rein(p.dir, ['memory', 'forget', 'mem_here00000001'])
    expect(forgot).toMatchObject({ code: 0, stderr: '', stdout: `forgot mem_here00000001 (project ${here}, decision): Tests use vitest, not jest.\n` })
    expect((await rein(p.dir, ['memory', 'list'])).stdout).not.toContain('mem_here00000001')
    const json = await rein(p.dir, ['memory', 'forget', '--json', 'mem_user00000001'])
    expect(json).toMatchObject({ code: 0, stderr: '' })
    expect(json.stdout.endsWith('\n')).toBe(true)
    expect(json.stdout.trim().split('\n').map((line) => JSON.parse(line) as MemoryEntry)).toEqual([expect.objectContaining({ id: 'mem_user00000001', scope: 'user', content: 'Prefers short answers.' })])
    const unknown = await rein(p.dir, ['memory', 'forget', 'mem_here00000001'])
    expect(unknown).toMatchObject({ code: 2, stdout: '', stderr: 'rein: no memory has the id "mem_here00000001"; rein memory list --all shows every id\n' })
  })

  it('exports every entry with all its fields as JSON lines', async () => {
    const { p, entries } = await seeded()
    const exported = await rein(p.dir, ['memory', 'export'])
    expect(exported).toMatchObject({ code: 0, stderr: '' })
    const parsed = exported.stdout.trim().split('\n').map((line) => JSON.parse(line) as MemoryEntry)
    const byId = (a: MemoryEntry, b: MemoryEntry) => (a.id < b.id ? -1 : 1)
    expect(parsed.sort(byId)).toEqual([...entries].sort(byId))
  })

  it('says what is missing: a subcommand, a query, an id, the @rein/memory row, a store', async () => {
    const p = await setUp([{ steps: [{ text: 'unused' }] }])
    expect(await rein(p.dir, ['memory'])).toMatchObject({ code: 2, stderr: 'rein: rein memory needs a subcommand: list, search <query>, forget <id> or export (see rein memory --help)\n' })
    expect(await rein(p.dir, ['memory', 'show'])).toMatchObject({ code: 2, stderr: expect.stringContaining('has no subcommand "show"') })
    expect(await rein(p.dir, ['memory', 'search'])).toMatchObject({ code: 2, stderr: expect.stringContaining('needs words to look for') })
    expect(await rein(p.dir, ['memory', 'search', '!!!', '--'])).toMatchObject({ code: 2, stderr: expect.stringContaining('needs words to look for') })
    expect(await rein(p.dir, ['memory', 'forget'])).toMatchObject({ code: 2, stderr: expect.stringContaining('needs one id') })
    // Usage mistakes all exit 2 before anything opens: an empty id, a query whose only letters NFKC turns into marks.
    expect(await rein(p.dir, ['memory', 'forget', ''])).toMatchObject({ code: 2, stderr: expect.stringContaining('needs one id') })
    expect(await rein(p.dir, ['memory', 'search', '\uFF9E'])).toMatchObject({ code: 2, stderr: expect.stringContaining('needs words to look for') })
    expect((await rein(p.dir, ['memory', '--help'])).stdout).toContain('rein memory search <query>')
    expect(await rein(p.dir, ['memory', 'list', 'extra'])).toMatchObject({ code: 2, stdout: '', stderr: 'rein: rein memory list takes no arguments, not "extra"; see rein memory --help\n' })
    expect(await rein(p.dir, ['memory', 'export', 'extra'])).toMatchObject({ code: 2, stdout: '', stderr: 'rein: rein memory export takes no arguments, not "extra"; see rein memory --help\n' })
    // Its stdout is JSON lines all the same: the refusal is one too.
    expect(await rein(p.dir, ['memory', 'export', '--json'])).toMatchObject({ code: 2, stdout: expect.stringContaining('{"type":"error","code":"USAGE","exit":2,'), stderr: expect.stringContaining('rein memory export does not take --json') })

    const noRow = await rein(p.dir, ['memory', 'list'])
    expect(noRow).toMatchObject({ code: 2, stdout: '' })
    expect(noRow.stderr).toBe(`rein: CONFIG_INVALID: ${join(p.dir, 'cordis.yml')} has no @rein/memory row: add one and a @rein/memory-sqlite row after it (see examples/cordis.yml) so the agent remembers across sessions\n`)

    writeFileSync(join(p.dir, 'cordis.yml'), `${readFileSync(join(p.dir, 'cordis.yml'), 'utf8')}- id: memory\n  name: '@rein/memory'\n`)
    const noStore = await rein(p.dir, ['memory', 'export'])
    expect(noStore).toMatchObject({ code: 2, stdout: '' })
    expect(noStore.stderr).toContain('has @rein/memory but no memory store: add a @rein/memory-sqlite row after it')
  })

  it('keeps the built-in composition\'s memory in REIN_HOME, made by the first memory saved, not by a list', async () => {
    const write = { scope: 'project', type: 'fact', content: 'Tests use vitest.' }
    const p = await setUp([{ steps: [{ toolCall: { id: 'w1', name: 'memory_write', arguments: JSON.stringify(write) } }] }, { steps: [{ text: 'ok' }] }])
    rmSync(join(p.dir, 'cordis.yml'))
    const list = await rein(p.dir, ['memory', 'list'], { env: { REIN_HOME: p.home } })
    expect(list).toMatchObject({ code: 0, stdout: '' })
    expect(list.stderr).toMatch(/^nothing remembered for the user or project .+; the agent saves memories with memory_write\n$/)
    expect(existsSync(join(p.home, 'memory.db'))).toBe(false)
    const builtIn = { REIN_HOME: p.home, OPENAI_BASE_URL: p.server.url, REIN_MODEL: 'mock-model' }
    const run = await rein(p.dir, ['run', '--allow', 'write', 'remember'], { env: builtIn })
    expect(run.code).toBe(0)
    expect(existsSync(join(p.home, 'memory.db'))).toBe(true)
  })

  it('does not let a damaged memory.db stop other commands, and names the file where memory is asked for', async () => {
    const p = await setUp([{ steps: [{ text: 'unused' }] }])
    rmSync(join(p.dir, 'cordis.yml'))
    mkdirSync(p.home, { recursive: true })
    writeFileSync(join(p.home, 'memory.db'), 'not a database, not at all '.repeat(200))
    const sessions = await rein(p.dir, ['sessions'], { env: { REIN_HOME: p.home } })
    expect(sessions.code).toBe(0)
    const list = await rein(p.dir, ['memory', 'list'], { env: { REIN_HOME: p.home } })
    expect(list.code).not.toBe(0)
    expect(list.stderr).toContain(join(p.home, 'memory.db'))
    // The command about memory fails on it: not also "memory is off for this run".
    expect(list.stderr).not.toContain('memory is off for this run')
    // A run goes on without memory, says so once, and offers the model no memory tool.
    const run = await rein(p.dir, ['run', 'hi'], { env: { REIN_HOME: p.home, OPENAI_BASE_URL: p.server.url, REIN_MODEL: 'mock-model' } })
    expect(run).toMatchObject({ code: 0, stdout: 'unused\n' })
    expect(run.stderr.split('\n').filter((line) => line.startsWith('memory is off for this run: '))).toHaveLength(1)
    expect(run.stderr).toContain(join(p.home, 'memory.db'))
    const body = p.server.requests[0]?.body as { tools?: { function: { name: string } }[] } | undefined
    const offered = body?.tools?.map((tool) => tool.function.name) ?? []
    expect(offered.filter((name) => name.startsWith('memory_'))).toEqual([])
  })
})

describe('rein chat with a memory.db it cannot use', () => {
  it('says memory is off once, not again when a save reloads the memory rows', async () => {
    const p = await memoryProject([{ steps: [{ text: 'First.' }] }, { steps: [{ text: 'Second.' }] }])
    mkdirSync(p.home, { recursive: true })
    writeFileSync(join(p.home, 'memory.db'), 'not a database\n')
    const chat = chatTerminal(p.dir)
    await expect.poll(chat.screen).toContain('memory is off for this run')
    await chat.turn('one', 'First.')
    const file = join(p.dir, 'cordis.yml')
    writeFileSync(file, readFileSync(file, 'utf8').replace("- id: memory\n  name: '@rein/memory'", "- id: memory\n  name: '@rein/memory'\n  config: { prompt: { maxEntries: 5 } }"))
    await expect.poll(chat.screen).toContain('cordis.yml reloaded')
    await chat.turn('two', 'Second.')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
    expect(chat.screen().split('memory is off for this run').length - 1).toBe(1)
  }, 30_000)
})
