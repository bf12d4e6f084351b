// What a person does in the moment between a rewind's last check of an empty folder a command
// removed and its `mkdir`: the folder they made there stays theirs (mode included), and a folder
// above swapped for a link is never made through. The moment is a hook on `mkdir` of that path.
import { chmod, mkdir, readdir, rmdir, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'

const hook: { path?: string; meanwhile?: () => Promise<void> } = {}

vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>()
  return {
    ...fs,
    mkdir: async (path: string, options?: Parameters<typeof fs.mkdir>[1]) => {
      if (hook.path !== undefined && path === hook.path) {
        const meanwhile = hook.meanwhile
        hook.path = undefined
        await meanwhile?.()
      }
      return fs.mkdir(path, options)
    },
  }
})

const { setup, tempRoot } = await import('./harness.ts')

/** Records `path` as an empty folder with `mode` that the turn `m1` removed. */
async function removedFolder(path: string, mode: number) {
  const { ctx, workspace } = await setup()
  await ctx.checkpoints.record('s1', { anchor: 'm1', root: workspace, path, folder: true, existed: true, before: null, after: null, mode, by: `sh: rmdir ${path}` })
  return { ctx, workspace }
}

describe('making again an empty folder a command removed, when something changes at the last moment', () => {
  it('leaves a folder a person made there just before the mkdir as it is, without the recorded mode', async () => {
    const { ctx, workspace } = await removedFolder('old', 0o000)
    const old = join(workspace, 'old')
    hook.path = old
    hook.meanwhile = async () => {
      await mkdir(old)
      await chmod(old, 0o755)
      await writeFile(join(old, 'mine.txt'), 'mine')
    }
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(result.already.map((item) => item.path)).toEqual(['old'])
    expect((await stat(old)).mode & 0o7777).toBe(0o755)
    expect(await readdir(old)).toEqual(['mine.txt'])
  })

  it('does not make it outside the workspace when a folder above became a link just before the mkdir', async () => {
    const outside = await tempRoot()
    const { ctx, workspace } = await removedFolder('dir/old', 0o751)
    const dir = join(workspace, 'dir')
    await mkdir(dir)
    hook.path = join(dir, 'old')
    hook.meanwhile = async () => {
      await rmdir(dir)
      await symlink(outside, dir)
    }
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(result.skipped.map((item) => [item.path, item.reason])).toEqual([['dir/old', expect.stringContaining('link')]])
    expect(await readdir(outside)).toEqual([])
  })
})
