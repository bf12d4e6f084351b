// Exec tools are covered by a workspace snapshot around each call: what a real shell command
// created, changed or deleted is recorded as the call's checkpoint and can be rewound.
import { execFileSync } from 'node:child_process'
import { chmod, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context, Logger, type Exporter, type Message } from '@deepseek-ai/cordis'
import ToolService, { defineTool, ReinError, type RunIdentity } from '@rein/tools'
import { afterEach, describe, expect, it, vi } from 'vitest'

afterEach(() => {
  vi.unstubAllEnvs()
})
import { CheckpointService, contentHash, MemoryCheckpointStore, type CheckpointEntry, type CheckpointRecord } from '../src/index.ts'
import { tempRoot, text } from './harness.ts'

const identity: RunIdentity = { agent: 'main', sessionId: 's1', conversationId: 's1', runId: 'run-1', turnId: 's1/1', anchor: 'm1', depth: 0 }

/** A shell tool as bash is to the snapshot: effects `exec`, a `command` argument; `background` returns a job-like handle. */
const sh = defineTool({
  name: 'sh',
  description: 'Runs a shell command.',
  parameters: { command: { type: 'string', required: true }, background: { type: 'boolean', default: false } },
  output: { schema: { type: 'json' }, render: () => 'ran' },
  effects: ['exec'],
  execute: (args, run) => {
    if (!args.background) {
      execFileSync('sh', ['-c', args.command], { cwd: run.cwd })
      return { ran: true }
    }
    let finish = () => {}
    const done = new Promise<void>((resolve) => { finish = resolve })
    const handle = { kind: 'background', jobId: 'sh-1' }
    Object.defineProperty(handle, 'done', { value: done, enumerable: false })
    background.push(() => {
      execFileSync('sh', ['-c', args.command], { cwd: run.cwd })
      finish()
      return done
    })
    return handle
  },
})
const background: (() => Promise<void>)[] = []

/** A new symbolic link to `target`, in a folder of its own. */
async function linkTo(target: string): Promise<string> {
  const link = join(await tempRoot(), 'workspace')
  await symlink(target, link)
  return link
}

/** `place`: the workspace, REIN_HOME and snapshot folder to use instead of fresh ones. */
async function setup(snapshot: Record<string, unknown> = {}, store = new MemoryCheckpointStore(), place: { workspace?: string; home?: string; folder?: string } = {}) {
  const workspace = place.workspace ?? await tempRoot()
  const home = place.home ?? await tempRoot()
  vi.stubEnv('REIN_HOME', home)
  const folder = place.folder ?? join(home, 'snapshots')
  const ctx = new Context()
  await ctx.plugin(ToolService, { askFor: [] })
  await ctx.plugin(CheckpointService, { snapshot: { folder, ...snapshot } })
  ctx.checkpoints.registerStore(store)
  ctx.tools.register(sh)
  let calls = 0
  const run = (command: string, anchor = 'm1', extra: Record<string, unknown> = {}) => ctx.tools.execute({
    callId: `c${++calls}`, name: 'sh', arguments: JSON.stringify({ command, ...extra }), signal: new AbortController().signal,
    context: { cwd: workspace, workspaceRoot: workspace, sessionId: 's1', identity: { ...identity, anchor } },
  })
  return { ctx, store, workspace, folder, run }
}

describe('snapshots around exec calls', () => {
  it('records what a command created, changed and deleted, and rewind undoes it', async () => {
    const { ctx, store, workspace, run } = await setup()
    await writeFile(join(workspace, 'keep.txt'), 'kept')
    await writeFile(join(workspace, 'edit.txt'), 'v1')
    await writeFile(join(workspace, 'gone.txt'), 'bye')
    expect((await run('echo v2 > edit.txt && rm gone.txt && mkdir -p out && echo new > out/made.txt')).isError).toBe(false)
    const records = await store.records('s1')
    expect(records.map((record) => [record.path, record.existed, record.before !== null, record.after !== null, record.by])).toEqual([
      ['edit.txt', true, true, true, 'sh: echo v2 > edit.txt && rm gone.txt && mkdir -p out && echo new > out/made.txt'],
      ['gone.txt', true, true, false, 'sh: echo v2 > edit.txt && rm gone.txt && mkdir -p out && echo new > out/made.txt'],
      ['out/made.txt', false, false, true, 'sh: echo v2 > edit.txt && rm gone.txt && mkdir -p out && echo new > out/made.txt'],
    ])
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.items.every((item) => item.changedWhile?.startsWith('sh: echo v2'))).toBe(true)
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(result.failed).toEqual([])
    expect(await text(join(workspace, 'edit.txt'))).toBe('v1')
    expect(await text(join(workspace, 'gone.txt'))).toBe('bye')
    expect(await text(join(workspace, 'out/made.txt'))).toBeNull()
    // A file a snapshot saw appear is set aside, not deleted: it may have been moved in from elsewhere.
    const made = result.restored.find((item) => item.path === 'out/made.txt')
    expect(made?.movedTo?.startsWith(join(process.env.REIN_HOME ?? '', 'recovered', 's1'))).toBe(true)
    expect(await text(made?.movedTo ?? '')).toBe('new\n')
    expect(await text(join(workspace, 'keep.txt'))).toBe('kept')
  })

  it('brings back what a command deleted with the whole workspace folder (rm -rf of the workspace)', async () => {
    const { ctx, store, workspace, run } = await setup()
    await writeFile(join(workspace, 'precious.txt'), 'precious')
    await mkdir(join(workspace, 'src'))
    await writeFile(join(workspace, 'src/main.ts'), 'main')
    await run('true')
    await run(`rm -rf '${workspace}'`)
    expect((await store.records('s1')).map((record) => [record.path, record.after])).toEqual([['precious.txt', null], ['src/main.ts', null]])
    await ctx.checkpoints.rewind('s1', 'm1')
    expect([await text(join(workspace, 'precious.txt')), await text(join(workspace, 'src/main.ts'))]).toEqual(['precious', 'main'])
  })

  it('brings files a command deleted back with their modes (rm secrets.json run.sh)', async () => {
    const { ctx, workspace, run } = await setup()
    await writeFile(join(workspace, 'secrets.json'), '{}', { mode: 0o600 })
    await writeFile(join(workspace, 'run.sh'), 'echo hi', { mode: 0o755 })
    await chmod(join(workspace, 'secrets.json'), 0o600)
    await chmod(join(workspace, 'run.sh'), 0o755)
    await run('rm secrets.json run.sh')
    expect((await ctx.checkpoints.rewind('s1', 'm1')).restored).toHaveLength(2)
    expect((await stat(join(workspace, 'secrets.json'))).mode & 0o777).toBe(0o600)
    expect((await stat(join(workspace, 'run.sh'))).mode & 0o777).toBe(0o755)
  })

  it.each([
    ['an empty folder', 'rm notes && mkdir notes'],
    ['folders within folders', 'rm notes && mkdir -p notes/sub && echo x > notes/sub/a.txt'],
  ])('brings back a file a command replaced with %s of the same name', async (_case, command) => {
    const { ctx, workspace, run } = await setup()
    await writeFile(join(workspace, 'notes'), 'precious notes')
    await run(command)
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect([result.failed, result.skipped]).toEqual([[], []])
    expect(await text(join(workspace, 'notes'))).toBe('precious notes')
  })

  it('records a file a command replaced with a folder of the same name as deleted, and rewind brings it back', async () => {
    const { ctx, store, workspace, run } = await setup()
    await writeFile(join(workspace, 'notes'), 'precious notes')
    await run('rm notes && mkdir notes && echo x > notes/a.txt')
    expect((await store.records('s1')).map((record) => [record.path, record.existed, record.after !== null])).toEqual([
      ['notes', true, false],
      ['notes/a.txt', false, true],
    ])
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(result.failed).toEqual([])
    expect(await text(join(workspace, 'notes'))).toBe('precious notes')
  })

  it('brings a folder a command replaced with a file of the same name back in one rewind', async () => {
    const { ctx, workspace, run } = await setup()
    await mkdir(join(workspace, 'cfg'))
    await writeFile(join(workspace, 'cfg', 'a.conf'), 'setting = 1')
    await run('rm -r cfg && echo flat > cfg')
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect([result.failed, result.skipped]).toEqual([[], []])
    expect(await text(join(workspace, 'cfg', 'a.conf'))).toBe('setting = 1')
    expect(await text(result.restored.find((item) => item.path === 'cfg')?.movedTo ?? '')).toBe('flat\n')
  })

  it.each([
    ['a file replaced with an empty folder', 'rm notes && mkdir notes'],
    ['a file replaced with folders holding a file', 'rm notes && mkdir -p notes/sub && echo x > notes/sub/a.txt'],
    ['a folder replaced with a file', 'rm -r cfg && echo flat > cfg'],
  ])('plans what the rewind does for %s: restored, not skipped (a dry run says so)', async (_case, command) => {
    const { ctx, workspace, run } = await setup()
    await writeFile(join(workspace, 'notes'), 'precious notes')
    await mkdir(join(workspace, 'cfg'))
    await writeFile(join(workspace, 'cfg', 'a.conf'), 'setting = 1')
    await run(command)
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.items.filter((item) => item.action === 'skipped')).toEqual([])
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(result.restored.map((item) => item.path).sort()).toEqual(plan.items.map((item) => item.path).sort())
  })

  it('plans a file replaced with a folder as skipped while the folder holds a file the rewind leaves, as the rewind does', async () => {
    const { ctx, workspace, run } = await setup()
    await writeFile(join(workspace, 'notes'), 'precious notes')
    await run('rm notes && mkdir notes')
    // A person's file, made outside any command: no record, so the rewind leaves it and the folder.
    await writeFile(join(workspace, 'notes', 'mine.txt'), 'mine')
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    // The folder the command made is kept too: it holds the person's file.
    expect(plan.items.map((item) => [item.path, item.folder ?? false, item.action])).toEqual([['notes', false, 'skipped'], ['notes', true, 'drifted']])
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(result.skipped.map((item) => item.path)).toEqual(['notes'])
    expect(result.drifted).toMatchObject([{ path: 'notes', folder: true, reason: expect.stringContaining('holds mine.txt') }])
    expect(await text(join(workspace, 'notes', 'mine.txt'))).toBe('mine')
  })

  it('rewind removes the empty folders a command made (mkdir -p build/out), and keeps a folder that was there', async () => {
    const { ctx, store, workspace, run } = await setup()
    await mkdir(join(workspace, 'src'))
    await run('mkdir -p build/out src/gen/deep logs')
    expect((await store.records('s1')).map((record) => [record.path, record.folder, record.createdFolders, record.existed, record.before, record.after])).toEqual([
      ['build/out', true, 1, false, null, null],
      ['logs', true, undefined, false, null, null],
      ['src/gen/deep', true, 1, false, null, null],
    ])
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.items.map((item) => [item.path, item.action, item.folders?.map((folder) => folder.path)])).toEqual([
      ['src/gen/deep', 'remove', ['src/gen/deep', 'src/gen']],
      ['logs', 'remove', ['logs']],
      ['build/out', 'remove', ['build/out', 'build']],
    ])
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(result.restored.map((item) => item.path).sort()).toEqual(['build/out', 'logs', 'src/gen/deep'])
    expect([result.drifted, result.skipped, result.failed]).toEqual([[], [], []])
    expect(await readdir(workspace)).toEqual(['src'])
    expect(await readdir(join(workspace, 'src'))).toEqual([])
  })

  it('records no folder that was there before: one a command removed and made again, one a .gitignore edit revealed, one holding only ignored files', async () => {
    const { ctx, store, workspace, run } = await setup()
    await writeFile(join(workspace, '.gitignore'), 'hidden/\n*.log\n')
    await mkdir(join(workspace, 'again'))
    await mkdir(join(workspace, 'hidden/inner'), { recursive: true })
    await run('true')
    await run('rmdir again && mkdir again && printf "*.log\\n" > .gitignore && mkdir -p cache/deep && echo x > cache/deep/run.log')
    expect((await store.records('s1')).filter((record) => record.folder)).toEqual([])
    await ctx.checkpoints.rewind('s1', 'm1')
    expect((await readdir(workspace)).sort()).toEqual(['.gitignore', 'again', 'cache', 'hidden'])
    expect(await readdir(join(workspace, 'hidden'))).toEqual(['inner'])
  })

  it('loses nothing a command did when another starts on the workspace while it runs (a subagent beside its parent)', async () => {
    const { ctx, store, workspace, run } = await setup()
    await writeFile(join(workspace, 'precious.txt'), 'only copy')
    await run('true')
    let release = () => {}
    const gate = new Promise<void>((resolve) => { release = resolve })
    ctx.tools.register(defineTool({
      name: 'slow_sh', description: 'Runs a command, then waits.', parameters: { command: { type: 'string', required: true } },
      output: { schema: { type: 'json' }, render: () => 'ran' }, effects: ['exec'],
      execute: async (args, call) => {
        execFileSync('sh', ['-c', args.command], { cwd: call.cwd })
        await gate
        return { ran: true }
      },
    }))
    const first = ctx.tools.execute({
      callId: 'a', name: 'slow_sh', arguments: JSON.stringify({ command: 'rm precious.txt && echo gen > gen.txt' }), signal: new AbortController().signal,
      context: { cwd: workspace, workspaceRoot: workspace, sessionId: 's1', identity },
    })
    await vi.waitFor(async () => expect(await text(join(workspace, 'gen.txt'))).toBe('gen\n'))
    await run('echo child > child.txt')
    release()
    await first
    expect((await store.records('s1')).map((record) => record.path).sort()).toEqual(['child.txt', 'gen.txt', 'precious.txt'])
    await ctx.checkpoints.rewind('s1', 'm1')
    expect(await text(join(workspace, 'precious.txt'))).toBe('only copy')
  })

  it('records what a command changed even when a wrapper inside the snapshot throws after it ran', async () => {
    const { ctx, store, workspace, run } = await setup()
    ctx.tools.wrapExecute(async (_call, next) => {
      await next()
      throw new Error('a wrapper failed after the command')
    })
    await writeFile(join(workspace, 'a.txt'), 'v1')
    await run('echo v2 > a.txt')
    expect((await store.records('s1')).map((record) => record.path)).toEqual(['a.txt'])
  })

  it('records nothing for a command that changed nothing, and does not blame it for an edit made between calls', async () => {
    const { store, workspace, run } = await setup()
    await writeFile(join(workspace, 'a.txt'), 'a')
    await run('true')
    await writeFile(join(workspace, 'a.txt'), 'edited by a person')
    await run('cat a.txt > /dev/null')
    expect(await store.records('s1')).toEqual([])
  })

  it('skips .gitignore d paths, the ignore list and .git, and notes an oversized file as not restorable', async () => {
    const { ctx, store, workspace, run } = await setup({ maxFileBytes: 10 })
    await writeFile(join(workspace, '.gitignore'), 'build/\n*.log\n')
    await mkdir(join(workspace, '.git'))
    await writeFile(join(workspace, '.git', 'HEAD'), 'ref')
    await writeFile(join(workspace, 'big.bin'), 'x'.repeat(20))
    await run('mkdir -p build node_modules/pkg && echo b > build/out.js && echo l > debug.log && echo n > node_modules/pkg/i.js && echo changed > .git/HEAD && echo y >> big.bin')
    const records = await store.records('s1')
    expect(records.map((record) => [record.path, record.gap])).toEqual([['big.bin', 'over the 10 B size cap']])
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.items).toMatchObject([{ path: 'big.bin', action: 'skipped', reason: 'not restored: over the 10 B size cap' }])
  })

  it('says a content whose pack was damaged is damaged, not dropped by the size cap, and one whose pack is gone is gone', async () => {
    const { ctx, store, workspace, folder, run } = await setup()
    await writeFile(join(workspace, 'a.txt'), 'kept by the walk before the command')
    await writeFile(join(workspace, 'b.txt'), 'in a pack that goes')
    await run('true')
    const packs = (await readdir(folder)).filter((name) => name.endsWith('.pack'))
    expect(packs).toHaveLength(1)
    await writeFile(join(folder, packs[0] ?? ''), 'x'.repeat(80))
    await run('rm a.txt')
    await rm(join(folder, packs[0] ?? ''))
    await run('rm b.txt')
    const gaps = (await store.records('s1')).map((record) => [record.path, record.gap])
    expect(gaps).toEqual([
      ['a.txt', 'deleted; its content before the command is damaged in the snapshot store (its bytes no longer match their hash)'],
      ['b.txt', 'deleted; its content before the command is no longer in the snapshot store (its pack was removed: the store\'s size cap, or by hand)'],
    ])
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.items.map((item) => item.reason)).not.toContainEqual(expect.stringContaining('(size cap)'))
  })

  it('attributes a background command\'s changes to it when its job ends', async () => {
    const { store, workspace, run } = await setup()
    expect((await run('echo late > late.txt', 'm1', { background: true })).isError).toBe(false)
    expect(await store.records('s1')).toEqual([])
    await background.splice(0)[0]?.()
    await new Promise((resolve) => setImmediate(resolve))
    await waitFor(async () => (await store.records('s1')).length === 1)
    expect((await store.records('s1')).map((record) => [record.path, record.by])).toEqual([['late.txt', 'sh: echo late > late.txt']])
    expect(await text(join(workspace, 'late.txt'))).toBe('late\n')
  })

  it('keeps a copy of what a file held before a rewind restores it, when it changed while a background command ran (a person may have written it)', async () => {
    const { ctx, workspace, run } = await setup()
    await writeFile(join(workspace, 'notes.md'), 'v1')
    await run('true', 'm0')
    await run('sleep 0', 'm1', { background: true })
    await run('echo bad > app.js', 'm2')
    await writeFile(join(workspace, 'notes.md'), 'v2: an hour of a person\'s own writing')
    await run('true', 'm3')
    const result = await ctx.checkpoints.rewind('s1', 'm2')
    expect(await text(join(workspace, 'notes.md'))).toBe('v1')
    const notes = result.restored.find((item) => item.path === 'notes.md')
    expect(notes?.changedWhile).toBe('sh: sleep 0')
    expect(notes?.copiedTo?.startsWith(join(process.env.REIN_HOME ?? '', 'recovered', 's1'))).toBe(true)
    expect(await text(notes?.copiedTo ?? '')).toBe('v2: an hour of a person\'s own writing')
    background.splice(0)
  })

  it('records what a command changed in files it hid with a .gitignore as it ran, and the .gitignore too, whatever hides it', async () => {
    const { ctx, workspace, run } = await setup()
    await mkdir(join(workspace, 'src'))
    await mkdir(join(workspace, 'docs'))
    const before: [string, string][] = [['keep.md', 'mine'], ['src/a.txt', 'a'], ['src/b.txt', 'b'], ['docs/guide.txt', 'g']]
    for (const [path, body] of before) await writeFile(join(workspace, path), body)
    await run('true', 'm0')
    await run('echo "*.md" >> .gitignore && echo changed > keep.md && echo "*" > src/.gitignore && rm src/a.txt && echo x >> src/b.txt && echo "docs/" >> .gitignore && echo y >> docs/guide.txt')
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect([result.failed, result.skipped, result.drifted]).toEqual([[], [], []])
    for (const [path, body] of before) expect([path, await text(join(workspace, path))]).toEqual([path, body])
    expect([await text(join(workspace, '.gitignore')), await text(join(workspace, 'src/.gitignore'))]).toEqual([null, null])
  })

  it('does not remove a file that a .gitignore edit merely revealed', async () => {
    const { ctx, workspace, run } = await setup()
    await writeFile(join(workspace, '.gitignore'), 'dist/\n')
    await mkdir(join(workspace, 'dist'))
    await writeFile(join(workspace, 'dist', 'old.js'), 'built long ago')
    // Change times cannot be set back: let this file grow older than the margin for coarse clocks.
    await new Promise((resolve) => setTimeout(resolve, 2100))
    await run('true')
    await run('printf "" > .gitignore')
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.items.map((item) => item.path)).toEqual(['.gitignore'])
  })

  it('keeps the shared snapshot store private: 0700 folder, 0600 packs', async () => {
    const { workspace, folder, run } = await setup()
    await writeFile(join(workspace, 'a.txt'), 'secret')
    await run('true')
    expect((await stat(folder)).mode & 0o777).toBe(0o700)
    const files = await readdir(folder)
    expect(files.length).toBeGreaterThan(0)
    for (const file of files) expect((await stat(join(folder, file))).mode & 0o777).toBe(0o600)
  })

  it('says exec tools are covered, except the skipped ones', async () => {
    const { ctx } = await setup({ skip: ['sh'] })
    expect(ctx.checkpoints.covers('sh')).toBe(false)
    expect(ctx.checkpoints.covers('write')).toBe(true)
    const other = await setup()
    expect(other.ctx.checkpoints.covers('sh')).toBe(true)
    expect(other.ctx.checkpoints.covers('nothing')).toBe(false)
  })
})

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error('condition never held')
}

describe('what a snapshot cannot restore', () => {
  it('is listed in the plan of a turn that ran a command, and not in one that did not', async () => {
    const { ctx, run } = await setup()
    await run('echo x > x.txt', 'm1')
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.notCovered).toHaveLength(1)
    expect(plan.notCovered[0]).toContain('node_modules/')
    expect((await ctx.checkpoints.plan('s1', 'other')).notCovered).toEqual([])
  })

  it('names a folder\'s own permissions among what a command\'s changes are not undone for (chmod 777 secrets/)', async () => {
    const { ctx, run } = await setup()
    await run('mkdir -p secrets && chmod 777 secrets', 'm1')
    expect((await ctx.checkpoints.plan('s1', 'm1')).notCovered.join('\n')).toContain('nor a folder\'s own permissions')
  })
})

describe('a snapshot that cannot be taken', () => {
  it('stops the command with CHECKPOINT_FAILED before it runs', async () => {
    const blocker = join(await tempRoot(), 'not-a-folder')
    await writeFile(blocker, 'a file where the store should be')
    const { ctx, store, workspace, run } = await setup({ folder: join(blocker, 'snapshots') })
    const logged: string[] = []
    const exporter: Exporter = { colors: false, export: (message: Message) => { if (message.name === 'checkpoint') logged.push(Logger.format(exporter, message)) } }
    ctx.logger.exporter(exporter)
    await writeFile(join(workspace, 'a.txt'), 'a')
    const result = await run('echo ran > ran.txt')
    expect(result).toMatchObject({ isError: true, error: { code: 'CHECKPOINT_FAILED' } })
    // The person sees what to do too, not only the model.
    expect(logged.join('\n')).toContain('sh was not run: the workspace snapshot before it failed (')
    expect(logged.join('\n')).toContain('free space for the snapshot store, or set snapshot.enabled: false')
    expect(await text(join(workspace, 'ran.txt'))).toBeNull()
    expect(await store.records('s1')).toEqual([])
  })
})

describe('a checkpoint store that cannot take records', () => {
  it('stops the command with CHECKPOINT_FAILED before it runs, as a write is refused, rather than run what it could not record', async () => {
    class DamagedStore extends MemoryCheckpointStore {
      ready(): Promise<void> {
        return Promise.reject(new ReinError('CHECKPOINT_LOG_DAMAGED', '/h/s1/checkpoints.jsonl:3: record 3 is missing'))
      }
    }
    const { store, workspace, run } = await setup({}, new DamagedStore())
    const result = await run('echo ran > ran.txt')
    expect(result).toMatchObject({ isError: true, error: { code: 'CHECKPOINT_FAILED', message: 'sh was not run: the checkpoint log cannot take records (CHECKPOINT_LOG_DAMAGED: /h/s1/checkpoints.jsonl:3: record 3 is missing), so a rewind could not undo what it would change; mend or move the log aside, or set snapshot.enabled: false on the @rein/checkpoint row to run commands without undo' } })
    expect(await text(join(workspace, 'ran.txt'))).toBeNull()
    expect(await store.records('s1')).toEqual([])
  })

  it('asks the child\'s own session of a child resumed on its own, whose root is not open here, as its records go there', async () => {
    // As checkpoint-jsonl does: it finds a session's folder through ctx.sessions, which knows only open sessions.
    const notOpen = () => Promise.reject(new ReinError('SESSION_NOT_OPEN', 'session root is not open'))
    class FolderStore extends MemoryCheckpointStore {
      ready(sessionId: string): Promise<void> {
        return sessionId === 'root' ? notOpen() : Promise.resolve()
      }
      override append(sessionId: string, entry: CheckpointEntry): Promise<CheckpointRecord> {
        return sessionId === 'root' ? notOpen() : super.append(sessionId, entry)
      }
    }
    const { ctx, store, workspace } = await setup({}, new FolderStore())
    const child = { ...identity, conversationId: 'root' }
    const result = await ctx.tools.execute({
      callId: 'c1', name: 'sh', arguments: JSON.stringify({ command: 'echo ran > ran.txt' }), signal: new AbortController().signal,
      context: { cwd: workspace, workspaceRoot: workspace, sessionId: 's1', identity: child },
    })
    expect(result.isError).toBe(false)
    expect(await text(join(workspace, 'ran.txt'))).toBe('ran\n')
    expect((await store.records('s1')).map((record) => record.path)).toEqual(['ran.txt'])
  })
})

/** A store on a full disk: it refuses every record that holds contents, or every record at all while `full` is `'all'`. */
class FullStore extends MemoryCheckpointStore {
  full: 'contents' | 'all' | false = 'contents'
  override append(sessionId: string, entry: CheckpointEntry): Promise<CheckpointRecord> {
    const refused = this.full === 'all' || (this.full === 'contents' && (entry.before !== null || entry.after !== null))
    if (refused) return Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }))
    return super.append(sessionId, entry)
  }
}

describe('a snapshot after a command that cannot be recorded', () => {
  it('leaves a record saying the command\'s changes could not be recorded, so a rewind of its turn does not find nothing to undo', async () => {
    const { ctx, store, workspace, run } = await setup({}, new FullStore())
    await writeFile(join(workspace, 'one.txt'), 'one')
    const result = await run('echo two > two.txt; echo one-changed > one.txt', 'm2')
    expect(result.isError).toBe(false)
    expect(await store.records('s1')).toMatchObject([{ anchor: 'm2', path: '.', by: 'sh: echo two > two.txt; echo one-changed > one.txt', gap: expect.stringMatching(/could not be recorded \(ENOSPC: no space left on device, write\)/) }])
    const plan = await ctx.checkpoints.plan('s1', 'm2')
    expect(plan.items).toMatchObject([{ path: '.', action: 'skipped', reason: expect.stringMatching(/^not restored: what this command changed could not be recorded/) }])
    expect(plan.notCovered.join('\n')).toContain('the changes `sh: echo two > two.txt; echo one-changed > one.txt` made could not be recorded (ENOSPC: no space left on device, write): they are not undone')
    const rewound = await ctx.checkpoints.rewind('s1', 'm2')
    expect(rewound.skipped).toMatchObject([{ path: '.' }])
    expect(await text(join(workspace, 'two.txt'))).toBe('two\n')
  })

  it('keeps that note while the store takes nothing, and writes it before the session\'s next record once the store takes records again', async () => {
    const full = new FullStore()
    full.full = 'all'
    const { ctx, store, run } = await setup({}, full)
    await run('echo two > two.txt', 'm2')
    expect(await store.records('s1')).toEqual([])
    full.full = false
    await run('echo three > three.txt', 'm3')
    expect((await store.records('s1')).map((record) => [record.anchor, record.path])).toEqual([['m2', '.'], ['m3', 'three.txt']])
    expect((await ctx.checkpoints.plan('s1', 'm2')).items).toMatchObject([{ path: 'three.txt' }, { path: '.', action: 'skipped' }])
  })

  it('writes that note as the session closes, once the store takes records again', async () => {
    const full = new FullStore()
    full.full = 'all'
    const { ctx, store, run } = await setup({}, full)
    await run('echo two > two.txt', 'm2')
    full.full = false
    await ctx.parallel('session/close', { id: 's1' } as never)
    expect(await store.records('s1')).toMatchObject([{ anchor: 'm2', path: '.', gap: expect.stringContaining('could not be recorded') }])
  })
})

describe('the walk', () => {
  it.each([
    ['by its own path', (workspace: string) => Promise.resolve(workspace)],
    ['through a symbolic link to the workspace', linkTo],
  ])('never enters rein\'s own folder inside the workspace, named %s', async (_case, named) => {
    const workspace = await tempRoot()
    await mkdir(join(workspace, '.rein-home'))
    const home = join(await named(workspace), '.rein-home')
    const { store, run } = await setup({}, undefined, { workspace, home, folder: join(await tempRoot(), 'snapshots') })
    expect((await run('echo s > .rein-home/sessions.txt && echo w > work.txt')).isError).toBe(false)
    expect((await store.records('s1')).map((record) => record.path)).toEqual(['work.txt'])
  })

  it('past maxFiles, reports no deletion in folders it did not reach, and says the workspace was not covered whole', async () => {
    const { store, workspace, run } = await setup({ maxFiles: 2 })
    for (const name of ['a', 'b', 'c', 'd']) {
      await mkdir(join(workspace, name))
      await writeFile(join(workspace, name, 'f.txt'), name)
    }
    await run('true')
    await run('true')
    expect((await store.records('s1')).map((record) => [record.path, record.gap])).toEqual([
      ['.', 'the workspace holds more than 2 files (snapshot.maxFiles); files past them were not snapshotted'],
      ['.', 'the workspace holds more than 2 files (snapshot.maxFiles); files past them were not snapshotted'],
    ])
  })

  it('takes the files of a renamed folder for new ones, and a rewind brings the old folder back', async () => {
    const { ctx, workspace, run } = await setup()
    await mkdir(join(workspace, 'src'))
    await writeFile(join(workspace, 'src', 'a.ts'), 'a')
    await run('true')
    // Past the margin for revealed files: a rename keeps the files' change times.
    await new Promise((resolve) => setTimeout(resolve, 2100))
    await run('mv src lib')
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(result.failed).toEqual([])
    expect(await text(join(workspace, 'src', 'a.ts'))).toBe('a')
    expect(await text(join(workspace, 'lib', 'a.ts'))).toBeNull()
  })

  it('takes a renamed folder\'s files for new ones even when the command also edits .gitignore', async () => {
    const { ctx, workspace, run } = await setup()
    await writeFile(join(workspace, '.gitignore'), 'build/\n')
    await mkdir(join(workspace, 'src'))
    await writeFile(join(workspace, 'src', 'a.ts'), 'a')
    await run('true')
    await new Promise((resolve) => setTimeout(resolve, 2100))
    await run('mv src lib && echo "*.log" >> .gitignore')
    await ctx.checkpoints.rewind('s1', 'm1')
    expect(await text(join(workspace, 'src', 'a.ts'))).toBe('a')
    expect(await text(join(workspace, 'lib', 'a.ts'))).toBeNull()
  })

  it('reports no file as created while the walk is cut at maxFiles, where the cut moves', async () => {
    const { store, workspace, run } = await setup({ maxFiles: 3 })
    for (let index = 0; index < 6; index++) await writeFile(join(workspace, `f${index}.txt`), String(index))
    await run('true')
    await run('rm f0.txt f1.txt')
    expect((await store.records('s1')).filter((record) => !record.existed)).toEqual([])
  })

  it('does not take a file written over a symbolic link for a new one, and never removes it', async () => {
    const { ctx, store, workspace, run } = await setup()
    await writeFile(join(workspace, 'target.txt'), 'one\n')
    execFileSync('ln', ['-s', 'target.txt', join(workspace, 'link.txt')])
    await run('sed -i s/one/two/ link.txt')
    expect((await store.records('s1')).map((record) => [record.path, record.gap])).toEqual([['link.txt', 'was a symbolic link before the command (links are not restored)']])
    await ctx.checkpoints.rewind('s1', 'm1')
    expect(await text(join(workspace, 'link.txt'))).toBe('two\n')
  })

  it('reports files and folders whose names are not valid UTF-8 as not restored when a command creates, changes or deletes them, never silently', async () => {
    const { ctx, workspace, run } = await setup()
    const named = (name: string, byte: number, ext = '.txt') => Buffer.concat([Buffer.from(`${workspace}/${name}`), Buffer.from([byte]), Buffer.from(ext)])
    await writeFile(named('chg', 0xff), 'orig')
    await writeFile(named('del', 0xfe), 'orig')
    await writeFile(named('same', 0xfb), 'untouched')
    // A valid name that holds U+FFFD itself is an ordinary file.
    await writeFile(join(workspace, 'ok\uFFFD.txt'), 'v1')
    await run('true')
    await run(`echo changed > "$(printf 'chg\\377.txt')"; rm "$(printf 'del\\376.txt')"; echo new > "$(printf 'new\\375.txt')"; mkdir "$(printf 'dir\\374')"; echo in > "$(printf 'dir\\374')/in.txt"; echo v2 > 'ok\uFFFD.txt'`)
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.items.map((item) => [item.path, item.action, item.reason]).sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      ['chg\\xff.txt', 'skipped', 'not restored: its name is not valid UTF-8 (not kept)'],
      ['del\\xfe.txt', 'skipped', 'not restored: deleted; its name is not valid UTF-8 (not kept)'],
      ['dir\\xfc', 'skipped', 'not restored: created; a folder whose name is not valid UTF-8 (not walked)'],
      ['new\\xfd.txt', 'skipped', 'not restored: created; its name is not valid UTF-8 (not kept)'],
      ['ok\uFFFD.txt', 'restore', undefined],
    ])
    expect(plan.notCovered.join('\n')).toContain('names that are not valid UTF-8')
    await ctx.checkpoints.rewind('s1', 'm1')
    expect(await text(join(workspace, 'ok\uFFFD.txt'))).toBe('v1')
    expect((await readFile(named('chg', 0xff))).toString()).toBe('changed\n')
  })

  it.each([
    ['a FIFO', 'mkfifo'],
    ['a socket', `node -e "require('net').createServer().listen(process.argv[1], () => process.exit())"`],
  ])('keeps what a file held when a command replaced it with %s, reports the new one as not restored, and leaves it', async (what, make) => {
    const { ctx, workspace, run } = await setup()
    await writeFile(join(workspace, 'data.txt'), 'important')
    await run('true')
    await run(`rm data.txt && ${make} data.txt && ${make} new.special`)
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.items.map((item) => [item.path, item.action, item.reason])).toEqual([
      ['new.special', 'skipped', `not restored: created; ${what}`],
      ['data.txt', 'skipped', 'is not a regular file'],
    ])
    expect(plan.items.find((item) => item.path === 'data.txt')?.before).toBe(contentHash(Buffer.from('important')))
    // Once a person removes what stands there, a rewind brings the content back.
    await rm(join(workspace, 'data.txt'))
    expect((await ctx.checkpoints.rewind('s1', 'm1')).restored.map((item) => item.path)).toEqual(['data.txt'])
    expect(await text(join(workspace, 'data.txt'))).toBe('important')
  })

  it('does not record again a write a tool recorded itself while a background command ran', async () => {
    const { ctx, store, workspace, run } = await setup()
    await run('true')
    expect((await run('echo job > job.txt', 'm1', { background: true })).isError).toBe(false)
    const before = null
    await ctx.checkpoints.record('s1', { anchor: 'm1', root: workspace, path: 'own.txt', existed: false, before, after: Buffer.from('mine') })
    await writeFile(join(workspace, 'own.txt'), 'mine')
    await run('true')
    await background.splice(0)[0]?.()
    let records: Awaited<ReturnType<typeof store.records>> = []
    await waitFor(async () => (records = await store.records('s1')).length >= 2)
    expect(records.map((record) => [record.path, record.by])).toEqual([['own.txt', undefined], ['job.txt', 'sh: echo job > job.txt']])
  })
})
