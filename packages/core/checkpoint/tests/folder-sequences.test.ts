// Commands that make, fill, remove and replace folders and files at one path, across calls and
// turns: a rewind of them all ends where the workspace was, and says so (nothing drifted or
// skipped), as its dry run did; a folder a person filled since stays and is reported kept; an
// empty folder a command removed comes back, and never through a link or over a person's file.
import { execFileSync } from 'node:child_process'
import { chmod, lstat, mkdir, readdir, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest'
import type { PlanItem, RewindResult } from '../src/index.ts'
import { shWorkspace } from './sh-workspace.ts'
import { tempRoot, text } from './harness.ts'

afterEach(() => {
  vi.unstubAllEnvs()
})

const setup = shWorkspace

/** Every path under `folder`, folders with a slash, sorted. */
async function tree(folder: string, prefix = ''): Promise<string[]> {
  const paths: string[] = []
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = `${prefix}${entry.name}`
    if (entry.isDirectory()) paths.push(`${path}/`, ...await tree(join(folder, entry.name), `${path}/`))
    else paths.push(path)
  }
  return paths.sort()
}

/** Each item as `path[/] action`, sorted, `remove` counted as `restore`: what a plan foresaw, to hold against `outcomes`. */
function planned(items: readonly PlanItem[]): string[] {
  return items.map((item) => `${item.path}${item.folder ? '/' : ''} ${item.action === 'remove' ? 'restore' : item.action}`).sort()
}

/** What a rewind did, as `planned` says it. */
function outcomes(result: RewindResult): string[] {
  const named = (items: readonly PlanItem[], outcome: string) => items.map((item) => `${item.path}${item.folder ? '/' : ''} ${outcome}`)
  return [...named(result.restored, 'restore'), ...named(result.already, 'already'), ...named(result.drifted, 'drifted'), ...named(result.skipped, 'skipped'), ...named(result.failed, 'failed')].sort()
}

describe('a rewind reports a correct end state as complete, whatever stood at a path in between', () => {
  // Each sequence of commands, run one call after another in one turn or in turns of their own.
  const sequences: [string, string, string[]][] = [
    ['a folder made, then replaced by a file', '', ['mkdir out', 'rmdir out && echo x > out']],
    ['a file made, then replaced by a folder', '', ['echo x > out', 'rm out && mkdir out']],
    ['a file made, then replaced by folders holding a file', '', ['echo x > out', 'rm out && mkdir -p out/sub && echo y > out/sub/a']],
    ['a folder made, then files put in it', '', ['mkdir out', 'echo x > out/a && mkdir out/sub && echo y > out/sub/b']],
    ['a folder made, filled, emptied and removed', '', ['mkdir out', 'echo x > out/a', 'rm -r out']],
    ['folders made for a file, then replaced by a file', '', ['mkdir -p gen/deep && echo a > gen/deep/a.txt', 'rm -r gen && echo flat > gen']],
    ['a file made, its folder later replaced by a file', 'mkdir keep', ['mkdir new && echo a > new/a.txt', 'rm -r new && echo flat > new']],
    ['a folder removed, then a file put where it was', 'mkdir out', ['rmdir out && echo x > out']],
    ['a folder removed, a file put there, then the file replaced by a folder again', 'mkdir out', ['rmdir out && echo x > out', 'rm out && mkdir -p out/sub']],
    ['an empty tree removed, then made again with a file in it', 'mkdir -p tree/a/b', ['rm -r tree', 'mkdir -p tree/a/b && echo x > tree/a/b/c']],
    // Only dist/assets is recorded as removed, dist as made: dist holds it again once the rewind is done.
    ['an empty tree removed, then its top folder made again', 'mkdir -p dist/assets', ['rm -rf dist', 'mkdir dist']],
  ]
  const cases = sequences.flatMap(([name, before, commands]) => [
    [name, 'in one turn', before, commands, commands.map(() => 'm1')] as const,
    [name, 'in turns of their own', before, commands, commands.map((_command, index) => `m${index + 1}`)] as const,
  ])

  it.each(cases)('%s (%s)', async (_name, _how, before, commands, anchors) => {
    const { ctx, workspace, run } = await setup()
    if (before !== '') execFileSync('sh', ['-c', before], { cwd: workspace })
    const start = await tree(workspace)
    await run('true')
    for (const [index, command] of commands.entries()) await run(command, anchors[index])
    const turns = [...new Set(anchors)]
    const plan = await ctx.checkpoints.plan('s1', turns)
    const result = await ctx.checkpoints.rewind('s1', turns)
    expect(await tree(workspace)).toEqual(start)
    expect(outcomes(result).filter((outcome) => !/ (restore|already)$/.test(outcome))).toEqual([])
    // The dry run said what the rewind then did.
    expect(planned(plan.items)).toEqual(outcomes(result))
  })

  // A folder that held files replaced by a file, and a file replaced by folders holding one: the first rewind ends as it began.
  const twice: [string, string, string[]][] = [
    ...sequences,
    ['a folder holding a file replaced by a file', 'mkdir -p dir/sub && echo s > dir/sub/f', ['rm -r dir && echo x > dir']],
    ['a file replaced by folders holding a file', 'echo t > was', ['rm was && mkdir -p was/x && echo y > was/x/y']],
  ]
  it.each(twice)('%s: rewound a second time, everything is found already back, as its dry run says', async (_name, before, commands) => {
    const { ctx, workspace, run } = await setup()
    if (before !== '') execFileSync('sh', ['-c', before], { cwd: workspace })
    const start = await tree(workspace)
    await run('true')
    for (const command of commands) await run(command)
    const first = await ctx.checkpoints.rewind('s1', 'm1')
    expect(outcomes(first).filter((outcome) => !/ (restore|already)$/.test(outcome))).toEqual([])
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    const again = await ctx.checkpoints.rewind('s1', 'm1')
    expect(await tree(workspace)).toEqual(start)
    expect(outcomes(again).filter((outcome) => !outcome.endsWith(' already'))).toEqual([])
    expect(planned(plan.items)).toEqual(outcomes(again))
    // No folder made for a file is said kept where the file the turn replaced stands again.
    expect([...plan.items, ...again.already].filter((item) => item.reason?.includes('not a folder')).map((item) => [item.path, item.reason])).toEqual([])
  })

  it('keeps a folder a command made that a person filled since, and reports it kept, not failed', async () => {
    const { ctx, workspace, run } = await setup()
    await run('true')
    await run('mkdir out')
    await run('echo x > out/a', 'm2')
    await writeFile(join(workspace, 'out/mine.txt'), 'mine')
    const result = await ctx.checkpoints.rewind('s1', ['m1', 'm2'])
    expect(outcomes(result)).toEqual(['out/ drifted', 'out/a restore'])
    expect(result.drifted[0]?.reason).toBe('a folder made while `sh: mkdir out` ran; holds mine.txt')
    expect(await tree(workspace)).toEqual(['out/', 'out/mine.txt'])
    expect(await text(join(workspace, 'out/mine.txt'))).toBe('mine')
  })
})

describe('folders a command removed with the files in them', () => {
  it('come back with a rewind as mkdir -p makes them (0755 under umask 022), the file with its own mode', async () => {
    const umask = process.umask(0o022)
    onTestFinished(() => void process.umask(umask))
    const { ctx, workspace, run } = await setup()
    await mkdir(join(workspace, 'a/b'), { recursive: true })
    await writeFile(join(workspace, 'a/b/notes.txt'), 'kept')
    await chmod(join(workspace, 'a/b/notes.txt'), 0o640)
    await run('true')
    await run('rm -r a')
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(result.restored.map((item) => item.path)).toEqual(['a/b/notes.txt'])
    expect(await text(join(workspace, 'a/b/notes.txt'))).toBe('kept')
    const modeOf = async (path: string) => ((await stat(join(workspace, path))).mode & 0o7777).toString(8)
    expect([await modeOf('a'), await modeOf('a/b'), await modeOf('a/b/notes.txt')]).toEqual(['755', '755', '640'])
  })
})

describe('an empty folder a command removed', () => {
  it.each([
    ['rmdir old', ['old']],
    ['rm -r tree', ['tree/a/b', 'tree/c']],
    ['mv old renamed', ['old']],
    ['rm -r tree && rmdir old && echo x > made.txt', ['old', 'tree/a/b', 'tree/c']],
  ])('is made again by a rewind of `%s`, as the dry run said', async (command, made) => {
    const { ctx, store, workspace, run } = await setup()
    await mkdir(join(workspace, 'old'))
    await mkdir(join(workspace, 'tree/a/b'), { recursive: true })
    await mkdir(join(workspace, 'tree/c'))
    const start = await tree(workspace)
    await run('true')
    await run(command)
    // The deepest of the empty folders that went: making them makes those above them.
    expect((await store.records('s1')).filter((record) => record.folder && record.existed).map((record) => record.path)).toEqual(made)
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(await tree(workspace)).toEqual(start)
    expect(result.restored.filter((item) => item.existed).map((item) => item.path).sort()).toEqual(made)
    expect(outcomes(result).filter((outcome) => !/ (restore|already)$/.test(outcome))).toEqual([])
    expect(planned(plan.items)).toEqual(outcomes(result))
  })

  it('comes back with the mode it had; a folder above it that went too comes back as mkdir -p makes it (0777 less the umask)', async () => {
    const umask = process.umask(0o022)
    onTestFinished(() => void process.umask(umask))
    const { ctx, store, workspace, run } = await setup()
    await mkdir(join(workspace, 'shared/inner'), { recursive: true })
    await chmod(join(workspace, 'shared/inner'), 0o751)
    await run('true')
    await run('rm -r shared')
    expect((await store.records('s1')).map((record) => [record.path, record.folder, record.existed, record.mode])).toEqual([['shared/inner', true, true, 0o751]])
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(result.restored.map((item) => [item.path, item.folder, item.existed])).toEqual([['shared/inner', true, true]])
    expect((await stat(join(workspace, 'shared/inner'))).mode & 0o7777).toBe(0o751)
    expect((await stat(join(workspace, 'shared'))).mode & 0o7777).toBe(0o755)
  })

  it('is not made where a person put a file since: the file stays, and the folder is reported skipped', async () => {
    const { ctx, workspace, run } = await setup()
    await mkdir(join(workspace, 'old'))
    await run('true')
    await run('rmdir old')
    await writeFile(join(workspace, 'old'), 'mine')
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(plan.items.map((item) => [item.path, item.action, item.reason])).toEqual([['old', 'skipped', 'an empty folder removed while `sh: rmdir old` ran; is now not a folder']])
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(outcomes(result)).toEqual(['old/ skipped'])
    expect(await text(join(workspace, 'old'))).toBe('mine')
  })

  it('is never made through a link: one now a link, or below one, is skipped and what the link leads to stays as it was', async () => {
    const { ctx, workspace, run } = await setup()
    const outside = await tempRoot()
    await mkdir(join(workspace, 'link'))
    await mkdir(join(workspace, 'via/inner'), { recursive: true })
    await run('true')
    await run('rmdir link && rm -r via')
    await symlink(outside, join(workspace, 'link'))
    await symlink(outside, join(workspace, 'via'))
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(outcomes(result)).toEqual(['link/ skipped', 'via/inner/ skipped'])
    expect(await readdir(outside)).toEqual([])
    expect((await lstat(join(workspace, 'via'))).isSymbolicLink()).toBe(true)
  })

  it('is not recorded when it is still there, only newly ignored', async () => {
    const { store, workspace, run } = await setup()
    await mkdir(join(workspace, 'cache'))
    await run('true')
    await run('echo "cache/" > .gitignore')
    expect((await store.records('s1')).map((record) => record.path)).toEqual(['.gitignore'])
  })
})
