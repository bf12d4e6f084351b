// A write that makes missing parent folders (mkdir -p) records how many; a rewind that removes the
// file removes them too, deepest first, when nothing else is in them. A folder that was there
// before, or that holds anything else now, stays, and the plan says so before the rewind does.
import { mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { setup, tempRoot, text } from './harness.ts'

/** Records the file as tool-fs does (with the folders it is about to make), then makes them and writes it. */
async function creating(ctx: Awaited<ReturnType<typeof setup>>['ctx'], workspace: string, anchor: string, path: string, createdFolders: number) {
  await ctx.checkpoints.record('s1', { anchor, root: workspace, path, existed: false, before: null, after: Buffer.from(path), ...(createdFolders > 0 ? { createdFolders } : {}) })
  await mkdir(dirname(join(workspace, path)), { recursive: true })
  await writeFile(join(workspace, path), path)
}

const outcomes = (item: { folders?: readonly { path: string; action: string; reason?: string }[] } | undefined) => item?.folders?.map((folder) => [folder.path, folder.action, folder.reason])

describe('rewind and the folders a write made', () => {
  it('rewind removes the folders a write created, deepest first, as the plan said', async () => {
    const { ctx, workspace } = await setup()
    await mkdir(join(workspace, 'src'))
    await creating(ctx, workspace, 't1', 'src/new/deep/a.ts', 2)
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items).toMatchObject([{ action: 'remove', reason: 'removes the folders made for it: src/new/deep, src/new' }])
    expect(outcomes(plan.items[0])).toEqual([['src/new/deep', 'remove', undefined], ['src/new', 'remove', undefined]])
    expect(await readdir(join(workspace, 'src/new/deep'))).toEqual(['a.ts'])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.restored).toMatchObject([{ path: 'src/new/deep/a.ts', reason: 'removed the folders made for it: src/new/deep, src/new' }])
    expect(outcomes(result.restored[0])).toEqual(outcomes(plan.items[0]))
    expect(await readdir(workspace)).toEqual(['src'])
    expect(await readdir(join(workspace, 'src'))).toEqual([])
  })

  it('plans to keep a made folder that a file the rewind restores goes back into', async () => {
    const { ctx, workspace } = await setup()
    // The turn deleted docs/a.md and its folder, then a write made docs again for b.md.
    await ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: 'docs/a.md', existed: true, before: Buffer.from('A'), after: null })
    await creating(ctx, workspace, 't1', 'docs/b.md', 1)
    const plan = await ctx.checkpoints.plan('s1', 't1')
    const result = await ctx.checkpoints.rewind('s1', 't1')
    const planned = plan.items.find((item) => item.path === 'docs/b.md')
    expect(outcomes(planned)).toEqual([['docs', 'keep', 'a.md goes back into it']])
    expect(await readdir(join(workspace, 'docs'))).toEqual(['a.md'])
    expect(result.restored.find((item) => item.path === 'docs/b.md')?.folders?.map((folder) => folder.action)).toEqual(['keep'])
  })

  it('removes a folder two files of the turn share once both are gone', async () => {
    const { ctx, workspace } = await setup()
    await creating(ctx, workspace, 't1', 'new/a.ts', 1)
    await creating(ctx, workspace, 't1', 'new/b.ts', 0)
    expect(outcomes((await ctx.checkpoints.plan('s1', 't1')).items.find((item) => item.path === 'new/a.ts'))).toEqual([['new', 'remove', undefined]])
    await ctx.checkpoints.rewind('s1', 't1')
    expect(await readdir(workspace)).toEqual([])
  })

  it('names a folder several files were made in once, on the first of them, where a command made them all (plan and result)', async () => {
    const { ctx, workspace } = await setup()
    // A command's snapshot records each new file in a new folder as having made it.
    for (const name of ['a', 'b', 'c']) await creating(ctx, workspace, 't1', `gen/${name}.txt`, 1)
    const plan = await ctx.checkpoints.plan('s1', 't1')
    const notes = (items: readonly { path: string; reason?: string }[]) => items.map((item) => [item.path, item.reason])
    // Newest first, as a plan lists them.
    expect(notes(plan.items)).toEqual([['gen/c.txt', 'removes the folder made for it: gen'], ['gen/b.txt', undefined], ['gen/a.txt', undefined]])
    expect(plan.items.map(outcomes)).toEqual([[['gen', 'remove', undefined]], [['gen', 'remove', undefined]], [['gen', 'remove', undefined]]])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(notes(result.restored)).toEqual([['gen/c.txt', 'removed the folder made for it: gen'], ['gen/b.txt', undefined], ['gen/a.txt', undefined]])
    expect(await readdir(workspace)).toEqual([])
  })

  it('names a shared made folder on the same row in the result as in the plan, when the newest file is already gone', async () => {
    const { ctx, workspace } = await setup()
    for (const name of ['a', 'b', 'c']) await creating(ctx, workspace, 't1', `gen/${name}.txt`, 1)
    await rm(join(workspace, 'gen/c.txt'))
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.filter((item) => item.reason !== undefined).map((item) => [item.path, item.action, item.reason])).toEqual([['gen/c.txt', 'already', 'removes the folder made for it: gen']])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    const noted = [...result.restored, ...result.already].filter((item) => item.reason !== undefined)
    expect(noted.map((item) => [item.path, item.reason])).toEqual([['gen/c.txt', 'removed the folder made for it: gen']])
    expect(await readdir(workspace)).toEqual([])
  })

  it('keeps a made folder a person put a file in after the turn, and says what it holds', async () => {
    const { ctx, workspace } = await setup()
    await creating(ctx, workspace, 't1', 'new/deep/a.ts', 2)
    await writeFile(join(workspace, 'new/notes.txt'), 'mine')
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items).toMatchObject([{ action: 'remove', reason: 'removes the folder made for it: new/deep; keeps new (holds notes.txt)' }])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.restored).toMatchObject([{ reason: 'removed the folder made for it: new/deep; kept new (holds notes.txt)' }])
    expect(outcomes(result.restored[0])).toEqual([['new/deep', 'remove', undefined], ['new', 'keep', 'holds notes.txt']])
    expect(await readdir(join(workspace, 'new'))).toEqual(['notes.txt'])
    expect(await text(join(workspace, 'new/notes.txt'))).toBe('mine')
  })

  it('keeps a made folder holding a folder a person made, even an empty one', async () => {
    const { ctx, workspace } = await setup()
    await creating(ctx, workspace, 't1', 'new/a.ts', 1)
    await mkdir(join(workspace, 'new/mine'))
    await writeFile(join(workspace, 'new/.env'), 'x')
    await writeFile(join(workspace, 'new/b.txt'), 'x')
    expect(outcomes((await ctx.checkpoints.plan('s1', 't1')).items[0])).toEqual([['new', 'keep', 'holds .env, b.txt, mine/']])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(outcomes(result.restored[0])).toEqual([['new', 'keep', 'holds .env, b.txt, mine/']])
    expect((await readdir(join(workspace, 'new'))).sort()).toEqual(['.env', 'b.txt', 'mine'])
  })

  it('keeps a folder that was there before the turn, even when the rewind leaves it empty', async () => {
    const { ctx, workspace } = await setup()
    await mkdir(join(workspace, 'empty'))
    await creating(ctx, workspace, 't1', 'empty/a.ts', 0)
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.restored).toMatchObject([{ path: 'empty/a.ts' }])
    expect(result.restored[0]?.folders).toBeUndefined()
    expect(result.restored[0]?.reason).toBeUndefined()
    expect(await readdir(join(workspace, 'empty'))).toEqual([])
  })

  it('rewinding only the later of two turns removes only the folders that turn made', async () => {
    const { ctx, workspace } = await setup()
    await creating(ctx, workspace, 't1', 'src/a.ts', 1)
    await creating(ctx, workspace, 't2', 'src/deep/b.ts', 1)
    const later = await ctx.checkpoints.rewind('s1', 't2')
    expect(outcomes(later.restored[0])).toEqual([['src/deep', 'remove', undefined]])
    expect(await readdir(join(workspace, 'src'))).toEqual(['a.ts'])
    const earlier = await ctx.checkpoints.rewind('s1', 't1')
    expect(outcomes(earlier.restored[0])).toEqual([['src', 'remove', undefined]])
    expect(await readdir(workspace)).toEqual([])
  })

  it('finishes the job of a rewind killed after the file went but before its folders did', async () => {
    const { ctx, workspace } = await setup()
    await creating(ctx, workspace, 't1', 'new/deep/a.ts', 2)
    // What a kill between the file's removal and its folders' leaves: the file gone, the folders there.
    await rm(join(workspace, 'new/deep/a.ts'))
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items).toMatchObject([{ action: 'already', reason: 'removes the folders made for it: new/deep, new' }])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.already).toMatchObject([{ reason: 'removed the folders made for it: new/deep, new' }])
    expect(await readdir(workspace)).toEqual([])
    // Killed after the deeper folder went: the next rewind removes the one left.
    await creating(ctx, workspace, 't2', 'x/y/b.ts', 2)
    await rm(join(workspace, 'x/y'), { recursive: true })
    expect(outcomes((await ctx.checkpoints.rewind('s1', 't2')).already[0])).toEqual([['x', 'remove', undefined]])
    expect(await readdir(workspace)).toEqual([])
  })

  it('says nothing of folders a killed write never made (recorded, then killed before mkdir)', async () => {
    const { ctx, workspace } = await setup()
    await ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: 'new/a.ts', existed: false, before: null, after: Buffer.from('a'), createdFolders: 1 })
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.already).toHaveLength(1)
    expect(result.already[0]?.folders).toBeUndefined()
    expect(result.failed).toEqual([])
  })

  it('never removes through a link: a made folder now a link to an empty folder outside stays, and so does that folder', async () => {
    const { ctx, workspace } = await setup()
    const outside = await tempRoot()
    await creating(ctx, workspace, 't1', 'new/a.ts', 1)
    await rm(join(workspace, 'new'), { recursive: true })
    await symlink(outside, join(workspace, 'new'))
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items).toMatchObject([{ action: 'skipped', reason: 'its folder new is now a symbolic link' }])
    expect(plan.items[0]?.folders).toBeUndefined()
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.skipped).toHaveLength(1)
    expect(await readdir(outside)).toEqual([])
    expect(await readdir(workspace)).toEqual(['new'])
  })

  it('removes a made folder standing where a file the turn deleted goes back, then restores the file', async () => {
    const { ctx, workspace, edit } = await setup()
    await writeFile(join(workspace, 'x'), 'old x')
    await edit('t1', 'x', null)
    await creating(ctx, workspace, 't1', 'x/a.ts', 1)
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => [item.path, item.action, item.reason])).toEqual([['x/a.ts', 'remove', 'removes the folder made for it: x'], ['x', 'restore', undefined]])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.restored.map((item) => [item.path, item.reason])).toEqual([['x/a.ts', 'removed the folder made for it: x'], ['x', undefined]])
    expect(await text(join(workspace, 'x'))).toBe('old x')
  })

  it('refuses a count of made folders that is not one of the path\'s own', async () => {
    const { ctx, workspace } = await setup()
    const record = (path: string, createdFolders: number, existed = false) => ctx.checkpoints.record('s1', {
      anchor: 't1', root: workspace, path, existed, before: existed ? Buffer.from('b') : null, after: Buffer.from('a'), createdFolders,
    })
    for (const [path, count] of [['a/b.ts', 2], ['a.ts', 1], ['a/b.ts', 0], ['a/b.ts', -1], ['a/b.ts', 1.5], ['./a/../b.ts', 1]] as const) {
      await expect(record(path, count)).rejects.toMatchObject({ code: 'INVALID_CHECKPOINT' })
    }
    await expect(record('a/b.ts', 1, true)).rejects.toMatchObject({ code: 'INVALID_CHECKPOINT' })
    await expect(record(join(workspace, 'a/b/c.ts'), 2)).resolves.toMatchObject({ path: 'a/b/c.ts', createdFolders: 2 })
  })
})

describe('rewind and the folders a command made with nothing in them', () => {
  const BY = 'bash: mkdir -p build/out'
  /** Records a folder as a snapshot does (made, empty of any recorded file), and makes it. */
  async function making(ctx: Awaited<ReturnType<typeof setup>>['ctx'], workspace: string, path: string, createdFolders = 0, anchor = 't1') {
    await ctx.checkpoints.record('s1', { anchor, root: workspace, path, folder: true, existed: false, before: null, after: null, by: BY, ...(createdFolders > 0 ? { createdFolders } : {}) })
    await mkdir(join(workspace, path), { recursive: true })
  }

  it('removes an empty made folder and the made folders above it, as the plan and dry run said; one already gone is already', async () => {
    const { ctx, workspace } = await setup()
    await making(ctx, workspace, 'build/out', 1)
    await making(ctx, workspace, 'gone')
    await rm(join(workspace, 'gone'), { recursive: true })
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => [item.path, item.folder, item.action, item.reason, item.changedWhile])).toEqual([
      ['gone', true, 'already', `a folder made while \`${BY}\` ran`, undefined],
      ['build/out', true, 'remove', `a folder made while \`${BY}\` ran; removes the folder made for it: build`, undefined],
    ])
    expect(outcomes(plan.items[1])).toEqual([['build/out', 'remove', undefined], ['build', 'remove', undefined]])
    expect(await readdir(join(workspace, 'build'))).toEqual(['out'])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.restored).toMatchObject([{ path: 'build/out', folder: true, reason: `a folder made while \`${BY}\` ran; removed the folder made for it: build` }])
    expect(result.already).toMatchObject([{ path: 'gone', folder: true }])
    expect(await readdir(workspace)).toEqual([])
  })

  it('removes a made folder holding only a made folder and a file the rewind removes', async () => {
    const { ctx, workspace } = await setup()
    await creating(ctx, workspace, 't1', 'gen/a.ts', 1)
    await making(ctx, workspace, 'gen/empty')
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => [item.path, item.action])).toEqual([['gen/empty', 'remove'], ['gen/a.ts', 'remove']])
    expect(outcomes(plan.items[1])).toEqual([['gen', 'remove', undefined]])
    await ctx.checkpoints.rewind('s1', 't1')
    expect(await readdir(workspace)).toEqual([])
  })

  it('keeps a made folder a person put a file in, and one a person made again by hand and filled, as drifted', async () => {
    const { ctx, workspace } = await setup()
    await making(ctx, workspace, 'out')
    await writeFile(join(workspace, 'out/mine.txt'), 'mine')
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => [item.path, item.action, item.reason])).toEqual([['out', 'drifted', `a folder made while \`${BY}\` ran; holds mine.txt`]])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.drifted.map((item) => [item.path, item.reason])).toEqual([['out', `a folder made while \`${BY}\` ran; holds mine.txt`]])
    expect(await text(join(workspace, 'out/mine.txt'))).toBe('mine')
    // The agent's folder removed by a rewind, then one of the same name made by hand and filled: it stays.
    await making(ctx, workspace, 'again', 0, 't2')
    expect((await ctx.checkpoints.rewind('s1', 't2')).restored.map((item) => item.path)).toEqual(['again'])
    await mkdir(join(workspace, 'again'))
    await mkdir(join(workspace, 'again/mine'))
    const again = await ctx.checkpoints.rewind('s1', 't2')
    expect(again.drifted.map((item) => [item.path, item.reason])).toEqual([['again', `a folder made while \`${BY}\` ran; holds mine/`]])
    expect(await readdir(join(workspace, 'again'))).toEqual(['mine'])
  })

  it('never acts through a link: a made folder now a symbolic link, or below one, is skipped and what the link leads to stays', async () => {
    const { ctx, workspace } = await setup()
    const outside = await tempRoot()
    await mkdir(join(outside, 'inner'))
    await making(ctx, workspace, 'link')
    await making(ctx, workspace, 'via/inner')
    await rm(join(workspace, 'link'), { recursive: true })
    await symlink(outside, join(workspace, 'link'))
    await rm(join(workspace, 'via'), { recursive: true })
    await symlink(outside, join(workspace, 'via'))
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => [item.path, item.action, item.reason])).toEqual([
      ['via/inner', 'skipped', `a folder made while \`${BY}\` ran; its folder via is now a symbolic link`],
      ['link', 'skipped', `a folder made while \`${BY}\` ran; is now a symbolic link`],
    ])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.skipped.map((item) => item.path)).toEqual(['via/inner', 'link'])
    expect(await readdir(outside)).toEqual(['inner'])
    expect((await readdir(workspace)).sort()).toEqual(['link', 'via'])
  })

  it('refuses a folder record with contents or a gap, a mode on a made one, or made folders above a removed one', async () => {
    const { ctx, workspace } = await setup()
    const folder = { anchor: 't1', root: workspace, path: 'out', folder: true as const, existed: false, before: null, after: null }
    for (const bad of [
      { after: Buffer.from('a') }, { mode: 0o755 }, { gap: 'too big' }, { existed: true, before: Buffer.from('b') }, { folder: 'yes' },
      { existed: true, createdFolders: 1, path: 'a/b' }, { existed: true, mode: 0o10000 }, { existed: 'yes' },
    ]) {
      await expect(ctx.checkpoints.record('s1', { ...folder, ...bad } as never)).rejects.toMatchObject({ code: 'INVALID_CHECKPOINT' })
    }
    await expect(ctx.checkpoints.record('s1', { ...folder, path: 'a/b', createdFolders: 1 })).resolves.toMatchObject({ path: 'a/b', folder: true, createdFolders: 1 })
    // An empty folder a command removed: it existed, with the mode it had.
    await expect(ctx.checkpoints.record('s1', { ...folder, existed: true, mode: 0o755 })).resolves.toMatchObject({ path: 'out', folder: true, existed: true, mode: 0o755 })
  })
})
