import { spawnSync } from 'node:child_process'
import { access, chmod, chown, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context, Service } from '@deepseek-ai/cordis'
import MemoryService from '@rein/memory'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as plugin from '../src/index.ts'
import { entry, openStore, tempRoot } from './temp-root.ts'

const COMPOSE_ON = fileURLToPath(new URL('./fixtures/compose-on.ts', import.meta.url))
const REPOSITORY = fileURLToPath(new URL('../../../../', import.meta.url))
/** nobody: a user other than the one the child runs as. */
const OTHER_USER = 65_534

const exists = (path: string) => access(path).then(() => true, () => false)

let reinHome: string
const savedHome = process.env.REIN_HOME

beforeEach(async () => {
  reinHome = join(await tempRoot(), 'rein-home')
  process.env.REIN_HOME = reinHome
})

afterEach(() => {
  if (savedHome === undefined) delete process.env.REIN_HOME
  else process.env.REIN_HOME = savedHome
})

/** What a tool definition @rein/memory registers looks like here. */
interface ToolLike {
  name: string
  execute(args: Record<string, unknown>, run: unknown): Promise<unknown>
}

/**
 * Stands in for @rein/tools' ctx.tools (not a dependency here): keeps what is registered, and runs
 * a tool's body as the registry would, giving what the model reads of a failure (`Error: <message>`).
 */
class ToolsStandIn extends Service {
  registered = new Map<string, ToolLike>()
  constructor(ctx: Context) {
    super(ctx, 'tools')
  }

  register(tool: ToolLike) {
    const { registered } = this
    return this.ctx.effect(() => {
      registered.set(tool.name, tool)
      return () => { registered.delete(tool.name) }
    }, 'tools.register')
  }

  preExecute() {
    return () => undefined
  }

  async modelReads(name: string, args: Record<string, unknown>): Promise<string> {
    const identity = { agent: 'main', sessionId: 's1', conversationId: 's1', runId: 'run-1', turnId: 's1/1', anchor: 'msg-1', depth: 0 }
    const run = { identity, sessionId: 's1', workspaceRoot: reinHome }
    return this.registered.get(name)!.execute(args, run).then(() => 'done', (error: Error) => `Error: ${error.message}`)
  }
}

/** Stands in for @rein/agent's ctx.agents (not a dependency here): keeps the prompt sections registered. */
class AgentsStandIn extends Service {
  sections: { id: string }[] = []
  constructor(ctx: Context) {
    super(ctx, 'agents')
  }

  section(section: { id: string }) {
    const { sections } = this
    return this.ctx.effect(() => {
      sections.push(section)
      return () => { sections.splice(sections.indexOf(section), 1) }
    }, 'agents.section')
  }
}

/** One turn of the event loop: the service takes the tools away after the call that found the damage has ended. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

async function compose(config: plugin.Config = {}) {
  const ctx = new Context()
  await ctx.plugin(MemoryService, {})
  const fiber = await ctx.plugin(plugin, config)
  return { ctx, fiber }
}

describe('the plugin', () => {
  it('keeps ctx.memory\'s entries in $REIN_HOME/memory.db: supersede, refresh, recall', async () => {
    const { ctx, fiber } = await compose()
    const file = join(reinHome, 'memory.db')
    expect(plugin.defaultMemoryFile()).toBe(file)
    expect(ctx.memory.hasStore()).toBe(true)
    const old = await ctx.memory.write({ scope: 'user', type: 'preference', content: 'Prefers npm', source: { sessionId: 's1' } })
    const correction = await ctx.memory.write({ scope: 'user', type: 'preference', content: 'Prefers pnpm', source: { sessionId: 's1' }, supersedes: old.entry.id })
    const again = await ctx.memory.write({ scope: 'user', type: 'preference', content: 'prefers PNPM.', source: { sessionId: 's2' } })
    expect(again).toMatchObject({ outcome: 'refreshed', entry: { id: correction.entry.id } })
    expect((await ctx.memory.recall({ scopes: ['user'], query: 'npm pnpm', limit: 10 })).map((entry) => entry.id)).toEqual([correction.entry.id])
    expect(await ctx.memory.get(old.entry.id)).toMatchObject({ retiredBy: correction.entry.id })
    expect(await exists(file)).toBe(true)
    await fiber.dispose()
  })

  it('unregisters and closes the store when disposed, and a reload finds the entries', async () => {
    const file = join(await tempRoot(), 'custom', 'memory.db')
    const { ctx, fiber } = await compose({ file })
    const { entry } = await ctx.memory.write({ scope: 'user', type: 'fact', content: 'Lives in Lisbon', source: { sessionId: 's1' } })
    expect(await exists(`${file}-wal`)).toBe(true)
    await fiber.dispose()
    expect(ctx.memory.hasStore()).toBe(false)
    // The last connection to close folds the WAL back and removes it: the store was closed.
    expect(await exists(`${file}-wal`)).toBe(false)
    await expect(ctx.memory.write({ scope: 'user', type: 'fact', content: 'x', source: { sessionId: 's1' } })).rejects.toMatchObject({ code: 'NO_MEMORY_STORE' })
    const reloaded = await ctx.plugin(plugin, { file })
    expect(await ctx.memory.list()).toEqual([entry])
    await reloaded.dispose()
  })

  it('loads on a file it cannot use, and every memory call fails with the error naming the file', async () => {
    const file = join(await tempRoot(), 'memory.db')
    await mkdir(file)
    const ctx = new Context()
    await ctx.plugin(MemoryService, {})
    await ctx.plugin(plugin, { file })
    await expect(ctx.memory.recall({ scopes: ['user'], limit: 5 })).rejects.toMatchObject({ code: 'MEMORY_STORE_FAILED', details: { file } })
  })

  it('a file it cannot use is not only logged: the store says it is unavailable and memory/unavailable is emitted, naming the file', async () => {
    const file = join(await tempRoot(), 'memory.db')
    await writeFile(file, 'not a database, not at all '.repeat(200))
    const ctx = new Context()
    const told: unknown[] = []
    ctx.on('memory/unavailable', (error) => { told.push(error) })
    await ctx.plugin(MemoryService, {})
    await ctx.plugin(plugin, { file })
    expect(told).toEqual([expect.objectContaining({ code: 'MEMORY_STORE_CORRUPT', details: expect.objectContaining({ file }) })])
    // Still registered, so `rein memory list` reports the error naming the file.
    expect(ctx.memory.hasStore()).toBe(true)
    await expect(ctx.memory.list()).rejects.toMatchObject({ code: 'MEMORY_STORE_CORRUPT', message: expect.stringContaining(file) })
  })

  it('a file found damaged after it opened (good header, damaged pages) turns memory off: the model reads no path and no advice for people, memory/unavailable carries it, and the tools go', async () => {
    const file = join(await tempRoot(), 'memory.db')
    const store = await openStore({ file })
    for (let index = 0; index < 500; index++) await store.insert(entry({ content: `entry ${index} `.repeat(20) }))
    await store.close()
    const bytes = await readFile(file)
    for (let index = 8192; index < bytes.length - 4096; index++) bytes[index] = (index * 31) & 0xff
    await writeFile(file, bytes)

    const ctx = new Context()
    await ctx.plugin(ToolsStandIn)
    await ctx.plugin(MemoryService, {})
    const told: { code: string; message: string }[] = []
    ctx.on('memory/unavailable', (error) => { told.push(error) })
    await ctx.plugin(plugin, { file })
    const tools = ctx.get('tools') as unknown as ToolsStandIn
    expect([...tools.registered.keys()].sort()).toEqual(['memory_forget', 'memory_search', 'memory_update', 'memory_write'])
    expect(told).toEqual([])

    expect(await tools.modelReads('memory_search', { query: 'entry', limit: 10 })).toBe('Error: memory is off for the rest of this session (its store is damaged); go on without it')
    expect(told).toEqual([expect.objectContaining({ code: 'MEMORY_STORE_CORRUPT', message: expect.stringMatching(/move it aside/) })])
    expect(told[0]!.message).toContain(file)
    await nextTurn()
    expect([...tools.registered.keys()]).toEqual([])
    // People still get the advice, naming the file.
    await expect(ctx.memory.list()).rejects.toMatchObject({ code: 'MEMORY_STORE_CORRUPT', message: expect.stringContaining(file) })
    expect(ctx.memory.unavailable()).toBe(told[0])
  })

  it('a fractional expiresAt is INVALID_ARGS before it reaches the INTEGER column, not MEMORY_STORE_FAILED', async () => {
    const { ctx, fiber } = await compose()
    const expiresAt = Date.now() + 60_000.5
    await expect(ctx.memory.write({ scope: 'user', type: 'fact', content: 'On call.', source: { sessionId: 's1' }, expiresAt })).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    const { entry } = await ctx.memory.write({ scope: 'user', type: 'fact', content: 'On call.', source: { sessionId: 's1' } })
    await expect(ctx.memory.update(entry.id, { expiresAt })).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    await fiber.dispose()
  })

  it('a projectId, session or message id holding half a character is INVALID_ARGS, not saved under another id (the file keeps text as UTF-8, which has no half characters)', async () => {
    const { ctx, fiber } = await compose()
    const half = 'work\uD800space'
    const drafts = [
      { scope: 'project' as const, projectId: half, type: 'fact' as const, content: 'Builds with make.', source: { sessionId: 's1' } },
      { scope: 'user' as const, type: 'fact' as const, content: 'Has a cat.', source: { sessionId: half } },
      { scope: 'user' as const, type: 'fact' as const, content: 'Has a dog.', source: { sessionId: 's1', messageId: half } },
    ]
    for (const draft of drafts) {
      await expect(ctx.memory.write(draft)).rejects.toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('half a character') })
    }
    expect(await ctx.memory.list()).toEqual([])
    await fiber.dispose()
  })

  it('a -wal file it cannot make private (another user\'s) leaves memory unavailable, MEMORY_STORE_FAILED naming it, instead of a raw EPERM that stops the composition; no handle on the file is left open', async () => {
    const root = await tempRoot()
    const store = await openStore({ file: join(root, 'memory.db') })
    await store.insert(entry())
    await store.close()
    // Another user's -wal, readable and writable by all: SQLite can use it, but only its owner may chmod it.
    const wal = `${store.file}-wal`
    await writeFile(wal, '')
    await chmod(wal, 0o666)
    await chown(wal, OTHER_USER, OTHER_USER)
    const report = composeWithoutPrivileges(store.file)
    const failed = { name: 'ReinError', code: 'MEMORY_STORE_FAILED', message: expect.stringContaining(wal) }
    expect(report).toEqual({ composed: true, unavailable: failed, list: failed, handles: 0 })
    expect(report.unavailable.message).toMatch(/have its owner run chmod 600/)
  })
})

describe('a database file not there yet', () => {
  it('is not created while the composition loads (a command that only reads the composition makes no file), nor by a read, but by the first write', async () => {
    const folder = join(await tempRoot(), 'not-yet')
    const file = join(folder, 'memory.db')
    const { ctx, fiber } = await compose({ file })
    expect(ctx.memory.hasStore()).toBe(true)
    expect(ctx.memory.unavailable()).toBeUndefined()
    expect(await exists(folder)).toBe(false)
    // A read finds nothing and makes nothing (rein memory list on a home that never saved one).
    expect(await ctx.memory.list()).toEqual([])
    expect(await ctx.memory.recall({ scopes: ['user'], limit: 5 })).toEqual([])
    expect(await ctx.memory.get('mem_000000000000')).toBeUndefined()
    expect(await exists(folder)).toBe(false)
    // Two writes at once open it once.
    await Promise.all([
      ctx.memory.write({ scope: 'user', type: 'fact', content: 'Lives in Lisbon', source: { sessionId: 's1' } }),
      ctx.memory.write({ scope: 'user', type: 'fact', content: 'Works late', source: { sessionId: 's1' } }),
    ])
    expect(await exists(file)).toBe(true)
    expect(await ctx.memory.list()).toHaveLength(2)
    await fiber.dispose()
    // Closed on dispose: the last connection folds the WAL back and removes it.
    expect(await exists(`${file}-wal`)).toBe(false)
  })

  it('locked by another connection creating it at the first call fails that call LOCKED, leaves memory on, and the next call opens it', async () => {
    const folder = await tempRoot()
    const file = join(folder, 'memory.db')
    const { ctx, fiber } = await compose({ file })
    // Another rein creating the same file, in a write it holds past the busy timeout.
    const other = new Database(file)
    other.exec('BEGIN EXCLUSIVE')
    await expect(ctx.memory.list()).rejects.toMatchObject({ code: 'MEMORY_STORE_LOCKED' })
    expect(ctx.memory.unavailable()).toBeUndefined()
    other.exec('COMMIT')
    other.close()
    expect(await ctx.memory.list()).toEqual([])
    await fiber.dispose()
  }, 30_000)

  it('disposed before any call, makes no file', async () => {
    const file = join(await tempRoot(), 'memory.db')
    const { fiber } = await compose({ file })
    await fiber.dispose()
    expect(await exists(file)).toBe(false)
  })

  it('in a folder that cannot be made is reported as the composition loads, as before, not at the first call', async () => {
    const root = await tempRoot()
    // A file where a folder on the path should be: the path can never be created.
    await writeFile(join(root, 'plain'), '')
    const file = join(root, 'plain', 'sub', 'memory.db')
    const ctx = new Context()
    const told: unknown[] = []
    ctx.on('memory/unavailable', (error) => { told.push(error) })
    await ctx.plugin(MemoryService, {})
    await ctx.plugin(plugin, { file })
    expect(told).toEqual([expect.objectContaining({ code: 'MEMORY_STORE_FAILED', message: expect.stringContaining(file) })])
  })

  it('that cannot be created at the first call (its folder became a file after loading) turns memory off like a file that could not be opened at startup: one notice, the tools and the block go, later calls log nothing', async () => {
    const folder = join(await tempRoot(), 'later-a-file')
    await mkdir(folder)
    const file = join(folder, 'memory.db')
    const ctx = new Context()
    await ctx.plugin(ToolsStandIn)
    await ctx.plugin(AgentsStandIn)
    await ctx.plugin(MemoryService, {})
    const told: { code: string; message: string }[] = []
    ctx.on('memory/unavailable', (error) => { told.push(error) })
    const warned: string[] = []
    ctx.logger.exporter({ levels: { default: 3 }, export: (message) => { if (message.type === 'warn') warned.push(message.args.map(String).join(' ')) } })
    await ctx.plugin(plugin, { file })
    const tools = ctx.get('tools') as unknown as ToolsStandIn
    const agents = ctx.get('agents') as unknown as AgentsStandIn
    expect([...tools.registered.keys()].sort()).toEqual(['memory_forget', 'memory_search', 'memory_update', 'memory_write'])
    expect(agents.sections.map((section) => section.id)).toEqual(['memory'])
    // Loaded while the folder could hold the file; before the first call it can no longer be made.
    await rm(folder, { recursive: true })
    await writeFile(folder, '')

    expect(await tools.modelReads('memory_search', { query: 'pnpm', limit: 10 })).toBe('Error: memory is off for the rest of this session (its store failed); go on without it')
    expect(told).toEqual([expect.objectContaining({ code: 'MEMORY_STORE_FAILED', message: expect.stringContaining(file) })])
    expect(ctx.memory.unavailable()).toBe(told[0])
    await nextTurn()
    expect([...tools.registered.keys()]).toEqual([])
    expect(agents.sections).toEqual([])
    // Still registered, so `rein memory list` reports why; told once, not again per call.
    await expect(ctx.memory.list()).rejects.toMatchObject({ code: 'MEMORY_STORE_FAILED', message: expect.stringContaining(file) })
    await expect(ctx.memory.recall({ scopes: ['user'], limit: 5 })).rejects.toMatchObject({ code: 'MEMORY_STORE_FAILED' })
    expect(told).toHaveLength(1)
    expect(warned).toEqual([])
  })
})

describe('Config file', () => {
  it.each([
    ['empty', '', /^file is empty: give the database file's path, or leave file out for \$REIN_HOME\/memory\.db/],
    ['only spaces', '  ', /^file is empty/],
    ['starting with ~/', '~/mem.db', /^file "~\/mem\.db" starts with ~, which is not expanded .*: give an absolute path, e\.g\. file: \/.*\/mem\.db$/],
    ['~user/…', '~bob/mem.db', /^file "~bob\/mem\.db" starts with ~, which is not expanded .*: give an absolute path$/],
  ])('%s is CONFIG_INVALID naming the field, and nothing is made in the working directory', async (_case, file, message) => {
    const cwd = process.cwd()
    const workspace = await tempRoot()
    process.chdir(workspace)
    try {
      const ctx = new Context()
      await ctx.plugin(MemoryService, {})
      const error = await ctx.plugin(plugin, { file }).then(() => undefined, (caught: unknown) => caught)
      expect(error).toMatchObject({ name: 'ReinError', code: 'CONFIG_INVALID', message: expect.stringMatching(message) })
      expect(ctx.memory.hasStore()).toBe(false)
      expect(await readdir(workspace)).toEqual([])
    } finally {
      process.chdir(cwd)
    }
  })
})

describe('a database file rein may not use', () => {
  it.each([
    ['a folder it may not write in', 'creating it failed', async (folder: string) => { await chmod(folder, 0o555) }],
    ['a file it may not write', 'opening it failed', async (folder: string) => {
      await writeFile(join(folder, 'memory.db'), '')
      await chmod(join(folder, 'memory.db'), 0o400)
    }],
  ])('%s: MEMORY_STORE_FAILED says what failed (%s) and to check who may read and write it, not only the system\'s words', async (_case, failed, deny) => {
    const folder = join(await tempRoot(), 'denied')
    await mkdir(folder, { mode: 0o755 })
    await deny(folder)
    const report = composeWithoutPrivileges(join(folder, 'memory.db'))
    expect(report.unavailable).toMatchObject({ code: 'MEMORY_STORE_FAILED' })
    expect(report.unavailable.message).toContain(`memory.db: ${failed}: `)
    expect(report.unavailable.message).toMatch(/permission|allowed/i)
    expect(report.unavailable.message).toContain('memory.db')
    expect(report.unavailable.message).toMatch(/give rein read and write access|set file/)
  })
})

/**
 * Runs compose-on.ts on `file` in a child that keeps uid 0 but drops every capability: without
 * CAP_FOWNER it may not chmod a file another user owns, as for any user, and it can still read the
 * repository and the root-owned folder.
 */
function composeWithoutPrivileges(file: string) {
  const child = spawnSync('setpriv', [
    '--inh-caps=-all', '--bounding-set=-all',
    process.execPath, '--conditions=@rein/source', '--import', 'tsx', COMPOSE_ON, file,
  ], { cwd: REPOSITORY, encoding: 'utf8', env: { ...process.env, HOME: tmpdir() } })
  if (child.status !== 0) throw new Error(`the child failed (${child.status}): ${child.stderr}${child.stdout}`)
  return JSON.parse(child.stdout) as { unavailable: { message: string } }
}
