// A command that changes a file's permissions (chmod) is recorded with the mode before and the mode
// after, so a rewind gives the earlier mode back while the file still has the one the command left,
// and leaves (and names) a mode a person set since. Real shell commands, the real file system.
import { chmod, rename, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { PlanItem } from '../src/index.ts'
import { giveModeBack } from '../src/restore.ts'
import { tempRoot, text } from './harness.ts'
import { shWorkspace } from './sh-workspace.ts'

afterEach(() => {
  vi.unstubAllEnvs()
})

/** Writes `path` in `workspace` with exactly `mode` (chmod: no umask). */
/** A workspace holding `files` (content and mode each), its first snapshot taken by a command that changed nothing. */
async function workspaceWith(files: Record<string, readonly [string, number]>) {
  const setup = await shWorkspace()
  for (const [path, [content, mode]] of Object.entries(files)) await fileWith(setup.workspace, path, content, mode)
  await setup.run('true')
  return setup
}

async function fileWith(workspace: string, path: string, content: string, mode: number): Promise<void> {
  await writeFile(join(workspace, path), content)
  await chmod(join(workspace, path), mode)
}

async function modeOf(workspace: string, path: string): Promise<number> {
  return (await stat(join(workspace, path))).mode & 0o7777
}

/** [path, action, reason] per item, by path. */
function rows(items: readonly PlanItem[]): [string, string, string | undefined][] {
  return items.map((item): [string, string, string | undefined] => [item.path, item.action, item.reason]).sort(([a], [b]) => a.localeCompare(b))
}

describe('a command that changed permissions', () => {
  it('is undone by a rewind: the file gets back the mode it had before (chmod 666 secret.txt), as the plan said', async () => {
    const { ctx, store, workspace, run } = await shWorkspace()
    await fileWith(workspace, 'secret.txt', 's', 0o600)
    await writeFile(join(workspace, 'other.txt'), 'o')
    await run('true')
    await run('chmod 666 secret.txt; echo x > other.txt')
    const chmodRecord = (await store.records('s1')).find((record) => record.path === 'secret.txt')
    expect([chmodRecord?.mode, chmodRecord?.modeAfter]).toEqual([0o600, 0o666])
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(rows(plan.items)).toEqual([
      ['other.txt', 'restore', undefined],
      ['secret.txt', 'restore', 'its permissions back to 0600 (from 0666)'],
    ])
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect([result.failed, result.skipped, result.drifted]).toEqual([[], [], []])
    expect(rows(result.restored)).toEqual(rows(plan.items))
    expect(await modeOf(workspace, 'secret.txt')).toBe(0o600)
    expect(await text(join(workspace, 'secret.txt'))).toBe('s')
    // Again: nothing left to do.
    expect(rows((await ctx.checkpoints.rewind('s1', 'm1')).already)).toEqual([['other.txt', 'already', undefined], ['secret.txt', 'already', undefined]])
  })

  it('has both undone when the same command changed the content and the permissions (echo >> and chmod)', async () => {
    const { ctx, workspace, run } = await workspaceWith({ 'secret.txt': ['s', 0o600] })
    await run('echo leaked >> secret.txt; chmod 666 secret.txt')
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(rows(plan.items)).toEqual([['secret.txt', 'restore', 'its permissions back to 0600 (from 0666)']])
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(rows(result.restored)).toEqual(rows(plan.items))
    expect([await text(join(workspace, 'secret.txt')), await modeOf(workspace, 'secret.txt')]).toEqual(['s', 0o600])
  })

  it('is undone over several turns back to the oldest mode (chmod 755, then 700: back to 0644), content and all', async () => {
    const { ctx, workspace, run } = await workspaceWith({ 'a.sh': ['x', 0o644], 'b.txt': ['b', 0o600] })
    await run('chmod 755 a.sh; chmod 640 b.txt', 'm1')
    await run('chmod 700 a.sh; echo more >> b.txt; chmod 604 b.txt', 'm2')
    const plan = await ctx.checkpoints.plan('s1', ['m1', 'm2'])
    expect(rows(plan.items)).toEqual([
      ['a.sh', 'restore', 'its permissions back to 0644 (from 0700)'],
      ['b.txt', 'restore', 'its permissions back to 0600 (from 0604)'],
    ])
    await ctx.checkpoints.rewind('s1', ['m1', 'm2'])
    expect([await modeOf(workspace, 'a.sh'), await modeOf(workspace, 'b.txt'), await text(join(workspace, 'b.txt'))]).toEqual([0o644, 0o600, 'b'])
  })

  it('leaves permissions a person changed since the command, saying so, and still restores the content', async () => {
    const { ctx, workspace, run } = await workspaceWith({ 'secret.txt': ['s', 0o600], 'both.txt': ['b', 0o600] })
    await run('chmod 666 secret.txt; echo more >> both.txt; chmod 666 both.txt')
    // A person's own chmod after the command: theirs, not the command's.
    await chmod(join(workspace, 'secret.txt'), 0o640)
    await chmod(join(workspace, 'both.txt'), 0o640)
    const kept = 'its permissions (0640 now) left as they are: changed since the rewound commands set 0666; 0600 before'
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(rows(plan.items)).toEqual([['both.txt', 'restore', kept], ['secret.txt', 'drifted', kept]])
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect([rows(result.restored), rows(result.drifted)]).toEqual([[['both.txt', 'restore', kept]], [['secret.txt', 'drifted', kept]]])
    expect([await modeOf(workspace, 'secret.txt'), await modeOf(workspace, 'both.txt'), await text(join(workspace, 'both.txt'))]).toEqual([0o640, 0o640, 'b'])
  })

  it('says nothing of permissions that changed and changed back within the rewound turns (not "from 0644 to 0644")', async () => {
    const { ctx, workspace, run } = await workspaceWith({ 'a.sh': ['x', 0o644], 'b.txt': ['b', 0o600] })
    await run('chmod 755 a.sh; chmod 640 b.txt', 'm1')
    await run('chmod 644 a.sh; echo more >> b.txt; chmod 600 b.txt', 'm2')
    const plan = await ctx.checkpoints.plan('s1', ['m1', 'm2'])
    expect(rows(plan.items)).toEqual([['a.sh', 'already', undefined], ['b.txt', 'restore', undefined]])
    const result = await ctx.checkpoints.rewind('s1', ['m1', 'm2'])
    expect([rows(result.already), rows(result.restored)]).toEqual([[['a.sh', 'already', undefined]], [['b.txt', 'restore', undefined]]])
    expect([await modeOf(workspace, 'a.sh'), await modeOf(workspace, 'b.txt'), await text(join(workspace, 'b.txt'))]).toEqual([0o644, 0o600, 'b'])
  })

  it('brings a file a later turn deleted back with the mode it had before an earlier turn changed it (chmod 600, then rm)', async () => {
    const { ctx, workspace, run } = await workspaceWith({ 'a.txt': ['a', 0o644] })
    await run('chmod 600 a.txt', 'm1')
    await run('rm a.txt', 'm2')
    const plan = await ctx.checkpoints.plan('s1', ['m1', 'm2'])
    expect(rows(plan.items)).toEqual([['a.txt', 'restore', 'its permissions back to 0644 (from 0600)']])
    await ctx.checkpoints.rewind('s1', ['m1', 'm2'])
    expect([await text(join(workspace, 'a.txt')), await modeOf(workspace, 'a.txt')]).toEqual(['a', 0o644])
  })

  it('gives back the mode of a file whose content a later command already put back (echo >> and chmod, then the old content again)', async () => {
    const { ctx, workspace, run } = await workspaceWith({ 'a.txt': ['a', 0o600] })
    await run('echo more >> a.txt; chmod 644 a.txt', 'm1')
    await run('printf a > a.txt', 'm2')
    const plan = await ctx.checkpoints.plan('s1', ['m1', 'm2'])
    expect(rows(plan.items)).toEqual([['a.txt', 'restore', 'its permissions back to 0600 (from 0644)']])
    const result = await ctx.checkpoints.rewind('s1', ['m1', 'm2'])
    expect(result.restored.map((item) => [item.path, item.copiedTo])).toEqual([['a.txt', undefined]])
    expect([await text(join(workspace, 'a.txt')), await modeOf(workspace, 'a.txt')]).toEqual(['a', 0o600])
  })
})

describe('giving a mode back', () => {
  it('brings a file back with its earlier mode once a folder a later command put in its place is gone (chmod 600, then rm and mkdir)', async () => {
    const { ctx, workspace, run } = await workspaceWith({ 'a.txt': ['a', 0o644] })
    await run('chmod 600 a.txt', 'm1')
    await run('rm a.txt && mkdir a.txt', 'm2')
    const result = await ctx.checkpoints.rewind('s1', ['m1', 'm2'])
    expect([result.failed, result.skipped]).toEqual([[], []])
    expect([await text(join(workspace, 'a.txt')), await modeOf(workspace, 'a.txt')]).toEqual(['a', 0o644])
  })

  it('never sets a mode through a symbolic link, and leaves a mode other than the one it expects', async () => {
    const root = await tempRoot()
    await fileWith(root, 'target.txt', 't', 0o666)
    await symlink('target.txt', join(root, 'link.txt'))
    await expect(giveModeBack(join(root, 'link.txt'), { from: 0o666, to: 0o600 })).rejects.toMatchObject({ code: 'ELOOP' })
    expect(await modeOf(root, 'target.txt')).toBe(0o666)
    await fileWith(root, 'mine.txt', 'm', 0o640)
    expect(await giveModeBack(join(root, 'mine.txt'), { from: 0o666, to: 0o600 })).toBe(0o640)
    expect(await modeOf(root, 'mine.txt')).toBe(0o640)
    await fileWith(root, 'agent.txt', 'a', 0o666)
    expect(await giveModeBack(join(root, 'agent.txt'), { from: 0o666, to: 0o600 })).toBe(0o600)
    expect(await modeOf(root, 'agent.txt')).toBe(0o600)
  })
})

describe('recording a change of permissions', () => {
  it('refuses a modeAfter that is not permission bits, comes without mode, or is given for a folder, with INVALID_CHECKPOINT', async () => {
    const { ctx, workspace } = await shWorkspace()
    const chmod = { anchor: 'm1', root: workspace, path: 'a.txt', existed: true, before: null, after: null, gap: 'its permissions changed from 0644 to 0755 (a rewind does not undo a change of permissions)' }
    for (const bad of [{ mode: 0o644, modeAfter: 0o10000 }, { mode: 0o644, modeAfter: 1.5 }, { modeAfter: 0o755 }]) {
      await expect(ctx.checkpoints.record('s1', { ...chmod, ...bad })).rejects.toMatchObject({ code: 'INVALID_CHECKPOINT' })
    }
    await expect(ctx.checkpoints.record('s1', { anchor: 'm1', root: workspace, path: 'old', existed: true, before: null, after: null, folder: true, mode: 0o755, modeAfter: 0o700 }))
      .rejects.toMatchObject({ code: 'INVALID_CHECKPOINT' })
  })
})

describe('a change of permissions an older rein recorded (no modeAfter)', () => {
  /** The record a build from before `modeAfter` wrote for `chmod`: the gap alone names the modes. */
  const oldRecord = (workspace: string, path: string, from: string, to: string, anchor = 'm1') => ({
    anchor, root: workspace, path, existed: true, before: null, after: null,
    gap: `its permissions changed from ${from} to ${to} (a rewind does not undo a change of permissions)`,
  })

  it('is reported and left as it is, as before; one that changed back says nothing', async () => {
    const { ctx, workspace } = await shWorkspace()
    await fileWith(workspace, 'secret.txt', 's', 0o666)
    await fileWith(workspace, 'back.sh', 'x', 0o644)
    await ctx.checkpoints.record('s1', oldRecord(workspace, 'secret.txt', '0600', '0666'))
    await ctx.checkpoints.record('s1', oldRecord(workspace, 'back.sh', '0644', '0755'))
    await ctx.checkpoints.record('s1', oldRecord(workspace, 'back.sh', '0755', '0644', 'm2'))
    const plan = await ctx.checkpoints.plan('s1', ['m1', 'm2'])
    expect(rows(plan.items)).toEqual([
      ['back.sh', 'already', undefined],
      ['secret.txt', 'skipped', 'its permissions changed from 0600 to 0666 and stay so (an older rein recorded the change without the mode after it)'],
    ])
    const result = await ctx.checkpoints.rewind('s1', ['m1', 'm2'])
    expect([rows(result.skipped), rows(result.already)]).toEqual([[rows(plan.items)[1]], [rows(plan.items)[0]]])
    expect([await modeOf(workspace, 'secret.txt'), await modeOf(workspace, 'back.sh')]).toEqual([0o666, 0o644])
  })
})

describe('review: rewinding in steps, and set-id bits', () => {
  it('gives back the oldest mode after a rewind of only the later turn gave back the later one (--to the later turn, then the earlier)', async () => {
    const { ctx, workspace, run } = await workspaceWith({ 'a.sh': ['x', 0o644], 'b.txt': ['b', 0o600] })
    await run('chmod 755 a.sh; echo more >> b.txt; chmod 640 b.txt', 'm1')
    await run('chmod 700 a.sh; chmod 604 b.txt', 'm2')
    const later = await ctx.checkpoints.rewind('s1', ['m2'])
    expect([later.drifted, later.failed, later.skipped]).toEqual([[], [], []])
    expect([await modeOf(workspace, 'a.sh'), await modeOf(workspace, 'b.txt')]).toEqual([0o755, 0o640])
    const plan = await ctx.checkpoints.plan('s1', ['m1', 'm2'])
    expect(rows(plan.items)).toEqual([
      ['a.sh', 'restore', 'its permissions back to 0644 (from 0755)'],
      ['b.txt', 'restore', 'its permissions back to 0600 (from 0640)'],
    ])
    const result = await ctx.checkpoints.rewind('s1', ['m1', 'm2'])
    expect(rows(result.restored)).toEqual(rows(plan.items))
    expect([await modeOf(workspace, 'a.sh'), await modeOf(workspace, 'b.txt'), await text(join(workspace, 'b.txt'))]).toEqual([0o644, 0o600, 'b'])
  })

  it('gives no setuid bit back to a file whose content it never recorded (chmod u-s, then a person put another build in its place)', async () => {
    const { ctx, workspace, run } = await workspaceWith({ 'tool': ['v1', 0o4755] })
    await run('chmod u-s tool')
    // A person's new build, renamed into place: another file, with the mode the command left.
    await fileWith(workspace, 'tool.new', 'v2', 0o755)
    await rename(join(workspace, 'tool.new'), join(workspace, 'tool'))
    const plan = await ctx.checkpoints.plan('s1', 'm1')
    expect(rows(plan.items)).toEqual([['tool', 'drifted', 'its permissions (0755 now) left as they are: a rewind gives no setuid or setgid bit back to a file whose content it did not record; 4755 before']])
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(rows(result.drifted)).toEqual(rows(plan.items))
    expect(await modeOf(workspace, 'tool')).toBe(0o755)
  })

  it('gives a setuid bit back with the content it belongs to (echo >> and chmod u-s in one command)', async () => {
    const { ctx, workspace, run } = await workspaceWith({ 'tool': ['v1', 0o4755] })
    await run('echo more >> tool; chmod u-s tool')
    const result = await ctx.checkpoints.rewind('s1', 'm1')
    expect(rows(result.restored)).toEqual([['tool', 'restore', 'its permissions back to 4755 (from 0755)']])
    expect([await text(join(workspace, 'tool')), await modeOf(workspace, 'tool')]).toEqual(['v1', 0o4755])
  })
})
