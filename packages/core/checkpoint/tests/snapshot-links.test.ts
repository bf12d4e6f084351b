// Symbolic links a command puts where a file was, or puts in a link's place: a link is never read
// or followed, so what it points to is not kept; but a file it replaced is, and comes back once the
// link is gone. A rewind never removes, follows or writes through a link.
import { chmod, lstat, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { contentHash } from '../src/index.ts'
import { shWorkspace } from './sh-workspace.ts'
import { tempRoot, text } from './harness.ts'

afterEach(() => {
  vi.unstubAllEnvs()
})

const setup = shWorkspace

const planned = async (ctx: Context, anchor = 'm1') => (await ctx.checkpoints.plan('s1', anchor)).items.map((item) => [item.path, item.action, item.reason])

describe('symbolic links a command puts in a file\'s place', () => {
  it.each([
    ['rm and ln -s to a file outside the workspace', (outside: string) => `rm a.txt && ln -s '${outside}' a.txt`],
    ['ln -sf to a file in the workspace', () => 'ln -sf other.txt a.txt'],
  ])('keeps what a file held when a command replaced it with a symbolic link (%s), and brings it back once the link is gone', async (_, command) => {
    const { ctx, store, workspace, run } = await setup()
    const outside = join(await tempRoot(), 'outside.txt')
    await writeFile(outside, 'outside')
    await writeFile(join(workspace, 'other.txt'), 'other')
    await writeFile(join(workspace, 'a.txt'), 'important')
    await chmod(join(workspace, 'a.txt'), 0o640)
    await run('true')
    await run(command(outside))
    expect((await store.records('s1')).map((record) => [record.path, record.existed, record.before, record.after, record.gap])).toEqual([
      ['a.txt', true, contentHash(Buffer.from('important')), null, undefined],
    ])
    // While the link stands, the rewind reports it and leaves it, never writing through it.
    expect(await planned(ctx)).toEqual([['a.txt', 'skipped', 'is now a symbolic link']])
    expect((await ctx.checkpoints.rewind('s1', 'm1')).skipped.map((item) => item.path)).toEqual(['a.txt'])
    expect((await lstat(join(workspace, 'a.txt'))).isSymbolicLink()).toBe(true)
    expect([await text(outside), await text(join(workspace, 'other.txt'))]).toEqual(['outside', 'other'])
    // Once a person removes the link, the file comes back, with its mode.
    await rm(join(workspace, 'a.txt'))
    expect((await ctx.checkpoints.rewind('s1', 'm1')).restored.map((item) => item.path)).toEqual(['a.txt'])
    expect(await text(join(workspace, 'a.txt'))).toBe('important')
    expect((await stat(join(workspace, 'a.txt'))).mode & 0o777).toBe(0o640)
  })

  it.each([
    ['removed', 'rm a.txt', 'restore'],
    ['pointed elsewhere', 'ln -sfn elsewhere a.txt', 'skipped'],
  ])('keeps what a file held when a command replaced it with a symbolic link that a later command %s', async (_, later, action) => {
    const { ctx, workspace, run } = await setup()
    await writeFile(join(workspace, 'a.txt'), 'important')
    await run('true')
    await run('ln -sf other.txt a.txt')
    await run(later, 'm2')
    // The later command's own record is about the link alone, which is not kept: that turn on its own is not undone.
    expect((await planned(ctx, 'm2'))[0]?.[1]).toBe('skipped')
    expect(await planned(ctx)).toEqual([['a.txt', action, action === 'skipped' ? 'is now a symbolic link' : undefined]])
    await rm(join(workspace, 'a.txt'), { force: true })
    await ctx.checkpoints.rewind('s1', 'm1')
    expect(await text(join(workspace, 'a.txt'))).toBe('important')
  })

  it('brings a file back that a link replaced after an earlier turn only changed its permissions (a chmod record is not content)', async () => {
    const { ctx, workspace, run } = await setup()
    await writeFile(join(workspace, 'a.txt'), 'important')
    await run('true', 'm0')
    await run('chmod 600 a.txt', 'm1')
    await run('ln -sf other.txt a.txt', 'm2')
    await run('rm a.txt', 'm3')
    expect((await planned(ctx, 'm1'))[0]?.[1]).toBe('restore')
    await ctx.checkpoints.rewind('s1', 'm1')
    expect(await text(join(workspace, 'a.txt'))).toBe('important')
  })

  it('reports a symbolic link a command removed as not restored, though a later command wrote a file there', async () => {
    const { ctx, workspace, run } = await setup()
    await symlink('elsewhere', join(workspace, 'link.txt'))
    await run('rm link.txt')
    await run('echo mine > link.txt', 'm2')
    expect(await planned(ctx)).toEqual([['link.txt', 'skipped', 'not restored: deleted; a symbolic link']])
    await ctx.checkpoints.rewind('s1', 'm1')
    expect(await text(join(workspace, 'link.txt'))).toBe('mine\n')
  })

  it('reports a symbolic link a command pointed elsewhere as not restored, and leaves it', async () => {
    const { ctx, workspace, run } = await setup()
    await writeFile(join(workspace, 'one.txt'), 'one')
    await writeFile(join(workspace, 'two.txt'), 'two')
    await symlink('one.txt', join(workspace, 'link.txt'))
    await run('ln -sfn two.txt link.txt')
    expect(await planned(ctx)).toEqual([['link.txt', 'skipped', 'not restored: a symbolic link that changed']])
    await ctx.checkpoints.rewind('s1', 'm1')
    expect(await readlink(join(workspace, 'link.txt'))).toBe('two.txt')
    expect([await text(join(workspace, 'one.txt')), await text(join(workspace, 'two.txt'))]).toEqual(['one', 'two'])
  })

  it('reports a file a command put in a symbolic link\'s place as not restored, and leaves it', async () => {
    const { ctx, workspace, run } = await setup()
    await writeFile(join(workspace, 'target.txt'), 'target')
    await symlink('target.txt', join(workspace, 'link.txt'))
    await run('rm link.txt && echo mine > link.txt')
    expect(await planned(ctx)).toEqual([['link.txt', 'skipped', 'not restored: was a symbolic link before the command (links are not restored)']])
    await ctx.checkpoints.rewind('s1', 'm1')
    expect((await lstat(join(workspace, 'link.txt'))).isFile()).toBe(true)
    expect([await text(join(workspace, 'link.txt')), await text(join(workspace, 'target.txt'))]).toEqual(['mine\n', 'target'])
  })
})
