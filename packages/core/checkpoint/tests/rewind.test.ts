import { spawnSync } from 'node:child_process'
import { appendFile, chmod, link, mkdir, readdir, rename, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { ReinError } from '@rein/base'
import { describe, expect, it } from 'vitest'
import { MemoryCheckpointStore, contentHash } from '../src/index.ts'
import { setup, tempRoot, text } from './harness.ts'

const names = (items: readonly { path: string }[]) => items.map((item) => item.path).sort()

describe('plan and rewind on the real file system', () => {
  it('restores edited files and removes created ones, for the turn and every later one', async () => {
    const { ctx, workspace, edit } = await setup()
    await writeFile(join(workspace, 'a.txt'), 'a0')
    await edit('t1', 'a.txt', 'a1')
    await edit('t1', 'new.txt', 'created')
    await edit('t2', 'a.txt', 'a2')
    await edit('t2', 'later.txt', 'later')
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(names(result.restored)).toEqual(['a.txt', 'later.txt', 'new.txt'])
    expect([result.already, result.drifted, result.skipped, result.failed].map((list) => list.length)).toEqual([0, 0, 0, 0])
    expect(await text(join(workspace, 'a.txt'))).toBe('a0')
    expect(await text(join(workspace, 'new.txt'))).toBeNull()
    expect(await text(join(workspace, 'later.txt'))).toBeNull()
  })

  it('leaves alone a file a person changes while the rewind runs, after its plan was made: drifted, their edit kept, not overwritten or removed', async () => {
    const store = new MemoryCheckpointStore()
    const { ctx, workspace, edit } = await setup(store)
    await writeFile(join(workspace, 'a.txt'), 'a0')
    await writeFile(join(workspace, 'b.txt'), 'b0')
    await edit('t1', 'c.txt', 'c1')
    await edit('t1', 'a.txt', 'a1')
    await edit('t1', 'b.txt', 'b1')
    // Newest first: while b.txt is put back, the person edits a.txt and c.txt, in which the plan saw the agent's text.
    const blob = store.blob.bind(store)
    store.blob = async (sessionId, hash) => {
      if (hash === contentHash(Buffer.from('b0'))) {
        await appendFile(join(workspace, 'a.txt'), ' mine')
        await appendFile(join(workspace, 'c.txt'), ' mine')
      }
      return blob(sessionId, hash)
    }
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(names(result.restored)).toEqual(['b.txt'])
    expect(names(result.drifted)).toEqual(['a.txt', 'c.txt'])
    expect([await text(join(workspace, 'a.txt')), await text(join(workspace, 'c.txt'))]).toEqual(['a1 mine', 'c1 mine'])
  })

  it('makes no workspace again at a path it was moved away from: every file under it is skipped, saying why, until the folder is there again', async () => {
    const { ctx, workspace, edit } = await setup()
    await writeFile(join(workspace, 'a.txt'), 'a0')
    await edit('t1', 'a.txt', 'a1')
    await edit('t1', 'new.txt', 'created')
    await edit('t1', 'a.txt', null)
    const moved = `${workspace}-moved`
    await rename(workspace, moved)
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => item.action)).toEqual(['skipped', 'skipped'])
    expect(plan.items[0]?.reason).toContain(`the workspace root ${workspace} is gone (moved or removed since the turn)`)
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.skipped).toHaveLength(2)
    expect(result.restored).toEqual([])
    expect(await stat(workspace).catch(() => undefined)).toBeUndefined()
    expect(await text(join(moved, 'new.txt'))).toBe('created')
    // Made again by hand, it is the workspace: the rewind restores into it.
    await mkdir(workspace)
    const again = await ctx.checkpoints.rewind('s1', 't1')
    expect(names(again.restored)).toEqual(['a.txt'])
    expect(await text(join(workspace, 'a.txt'))).toBe('a0')
  })

  it('makes no moved workspace again when all the turns left in it is a chmod, a made folder or a file too big to keep', async () => {
    for (const left of ['chmod', 'folder', 'gap'] as const) {
      const { ctx, workspace, edit } = await setup()
      await writeFile(join(workspace, 'a.txt'), 'a0')
      await edit('t1', 'a.txt', null)
      const base = { anchor: 't1', root: workspace, before: null, after: null }
      if (left === 'chmod') await ctx.checkpoints.record('s1', { ...base, path: 'run.sh', existed: true, gap: 'its permissions changed from 644 to 755', mode: 0o644, modeAfter: 0o755 })
      if (left === 'folder') await ctx.checkpoints.record('s1', { ...base, path: 'out', existed: false, folder: true, by: 'bash: mkdir out' })
      if (left === 'gap') await ctx.checkpoints.record('s1', { ...base, path: 'big.bin', existed: false, gap: 'created; over 8 MiB' })
      await rename(workspace, `${workspace}-moved`)
      const result = await ctx.checkpoints.rewind('s1', 't1')
      expect([left, result.restored]).toEqual([left, []])
      expect(await stat(workspace).catch(() => undefined)).toBeUndefined()
    }
  })

  it('restores a file to before an earlier turn after a rewind to a later one (not drifted)', async () => {
    const { ctx, workspace, edit } = await setup()
    await edit('t1', 'a.txt', 'a1')
    await edit('t2', 'a.txt', 'a2')
    expect((await ctx.checkpoints.rewind('s1', 't2')).restored).toHaveLength(1)
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.drifted).toEqual([])
    expect(result.restored.map((item) => item.action)).toEqual(['remove'])
    expect(await text(join(workspace, 'a.txt'))).toBeNull()
  })

  it('rewinds past a recorded write that never happened (the tool failed after recording)', async () => {
    const { ctx, workspace } = await setup()
    const file = join(workspace, 'a.txt')
    await writeFile(file, 'a0')
    const record = (anchor: string, before: string, after: string) => ctx.checkpoints.record('s1', { anchor, root: workspace, path: 'a.txt', existed: true, before: Buffer.from(before), after: Buffer.from(after) })
    await record('t1', 'a0', 'lost')
    await record('t1', 'a0', 'a1')
    await writeFile(file, 'a1')
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.drifted).toEqual([])
    expect(await text(file)).toBe('a0')
  })

  it('says a file deleted since the edit was deleted, and leaves it deleted', async () => {
    const { ctx, workspace, edit } = await setup()
    await writeFile(join(workspace, 'a.txt'), 'a0')
    await edit('t1', 'a.txt', 'a1')
    await rm(join(workspace, 'a.txt'))
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items).toMatchObject([{ action: 'drifted', reason: 'deleted since the recorded edit' }])
  })

  it('never acts through a folder that became a symbolic link: the file outside stays', async () => {
    const { ctx, workspace, edit } = await setup()
    const outside = await tempRoot()
    await mkdir(join(workspace, 'out'))
    await edit('t1', 'out/x.txt', 'made')
    await rename(join(workspace, 'out', 'x.txt'), join(outside, 'x.txt'))
    await rm(join(workspace, 'out'), { recursive: true })
    await symlink(outside, join(workspace, 'out'))
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.skipped).toMatchObject([{ path: 'out/x.txt', reason: 'its folder out is now a symbolic link' }])
    expect(await text(join(outside, 'x.txt'))).toBe('made')
  })

  it('quotes a folder name holding a line break or a bidi control in the reason it gives, so the reason stays one line that reads as it is', async () => {
    const { ctx, workspace, edit } = await setup()
    const outside = await tempRoot()
    for (const folder of ['evil\nname', 'rtl\u202eexe.txt']) {
      await mkdir(join(workspace, folder))
      await edit('t1', `${folder}/x.txt`, 'made')
      await rm(join(workspace, folder), { recursive: true })
      await symlink(outside, join(workspace, folder))
    }
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => String(item.reason)).sort((a, b) => a.localeCompare(b))).toEqual(['its folder "evil\\nname" is now a symbolic link', 'its folder "rtl\\u202eexe.txt" is now a symbolic link'])
  })

  it('quotes a file name holding a line break in why it was left alone when its folder became a link just before the write, so the reason stays one line', async () => {
    const store = new MemoryCheckpointStore()
    const { ctx, workspace, edit } = await setup(store)
    const outside = await tempRoot()
    await mkdir(join(workspace, 'out'))
    await writeFile(join(workspace, 'out', 'evil\nname.txt'), 'old')
    await writeFile(join(workspace, 'a.txt'), 'a0')
    await edit('t1', 'out/evil\nname.txt', 'new')
    await edit('t1', 'a.txt', 'a1')
    // While its own content is read back, after it was looked at again, out becomes a link.
    const blob = store.blob.bind(store)
    store.blob = async (sessionId, hash) => {
      if (hash === contentHash(Buffer.from('old'))) {
        await rm(join(workspace, 'out'), { recursive: true })
        await symlink(outside, join(workspace, 'out'))
      }
      return blob(sessionId, hash)
    }
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.failed.map((item) => item.error)).toEqual(['CHECKPOINT_UNSAFE_PATH: "out/evil\\nname.txt" was left alone: its folder out is now a symbolic link'])
    // Its content was read back first, so the check sits right before the write: nothing went through the link.
    expect(await readdir(outside)).toEqual([])
  })

  it('never acts through a workspace root that became a symbolic link: every file under it is skipped, what it leads to stays', async () => {
    const { ctx, workspace, edit } = await setup()
    await writeFile(join(workspace, 'a.txt'), 'orig')
    await edit('t1', 'a.txt', 'agent')
    await edit('t1', 'new.txt', 'new')
    const other = await tempRoot()
    await writeFile(join(other, 'a.txt'), 'agent')
    await writeFile(join(other, 'new.txt'), 'new')
    await rename(workspace, join(await tempRoot(), 'moved'))
    await symlink(other, workspace)
    const result = await ctx.checkpoints.rewind('s1', 't1')
    const reason = `the workspace root ${workspace} is now a symbolic link`
    expect(names(result.skipped)).toEqual(['a.txt', 'new.txt'])
    expect(result.skipped.map((item) => item.reason)).toEqual([reason, reason])
    expect([result.restored, result.failed]).toEqual([[], []])
    expect([await text(join(other, 'a.txt')), await text(join(other, 'new.txt'))]).toEqual(['agent', 'new'])
  })

  it('never acts through a workspace root whose real path changed (a folder above it became a symbolic link)', async () => {
    const { ctx } = await setup()
    const base = await tempRoot()
    const workspace = join(base, 'up', 'ws')
    await mkdir(workspace, { recursive: true })
    await ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: 'a.txt', existed: false, before: null, after: Buffer.from('made') })
    const other = await tempRoot()
    await mkdir(join(other, 'ws'))
    await writeFile(join(other, 'ws', 'a.txt'), 'made')
    await rename(join(base, 'up'), join(base, 'up.real'))
    await symlink(other, join(base, 'up'))
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.skipped.map((item) => [item.path, item.reason])).toEqual([['a.txt', `the workspace root ${workspace} now leads to ${join(other, 'ws')}`]])
    expect(await text(join(other, 'ws', 'a.txt'))).toBe('made')
  })

  it('groups records of one file however its path was written, and refuses a path outside the root', async () => {
    const { ctx, workspace } = await setup()
    const file = join(workspace, 'a.txt')
    await writeFile(file, 'a0')
    await ctx.checkpoints.record('s1', { anchor: 't1', root: `${workspace}/`, path: './a.txt', existed: true, before: Buffer.from('a0'), after: Buffer.from('a1') })
    await ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: file, existed: true, before: Buffer.from('a1'), after: Buffer.from('a2') })
    await writeFile(file, 'a2')
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => [item.path, item.action])).toEqual([['a.txt', 'restore']])
    await expect(ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: '../x.txt', existed: false, before: null, after: Buffer.from('x') }))
      .rejects.toMatchObject({ code: 'INVALID_CHECKPOINT' })
  })

  it('rewinds only later turns when asked for a later anchor', async () => {
    const { ctx, workspace, edit } = await setup()
    await edit('t1', 'a.txt', 'a1')
    await edit('t2', 'a.txt', 'a2')
    const result = await ctx.checkpoints.rewind('s1', 't2')
    expect(names(result.restored)).toEqual(['a.txt'])
    expect(await text(join(workspace, 'a.txt'))).toBe('a1')
  })

  it('given the turn and every later one, undoes them all even when the turn\'s records landed after a later turn\'s (a background command ending late)', async () => {
    const { ctx, workspace, edit } = await setup()
    await writeFile(join(workspace, 'src.ts'), 'v0')
    await edit('t2', 'src.ts', 'v2')
    // Turn 1's background build ends during turn 2: its record comes after turn 2's.
    await edit('t1', 'dist.js', 'built')
    const plan = await ctx.checkpoints.plan('s1', ['t1', 't2'])
    expect(names(plan.items)).toEqual(['dist.js', 'src.ts'])
    expect(plan.anchor).toBe('t1')
    const result = await ctx.checkpoints.rewind('s1', ['t1', 't2'])
    expect(names(result.restored)).toEqual(['dist.js', 'src.ts'])
    expect(await text(join(workspace, 'src.ts'))).toBe('v0')
  })

  it('plans a turn that recorded nothing from the first later turn that did, given the anchors from it on', async () => {
    const { ctx, edit } = await setup()
    await edit('t2', 'a.txt', 'a2')
    expect(names((await ctx.checkpoints.plan('s1', ['t1', 't2'])).items)).toEqual(['a.txt'])
    expect((await ctx.checkpoints.plan('s1', ['t1'])).items).toEqual([])
  })

  it('restores a file the turn deleted', async () => {
    const { ctx, workspace, edit } = await setup()
    await writeFile(join(workspace, 'gone.txt'), 'keep me')
    await edit('t1', 'gone.txt', null)
    await ctx.checkpoints.rewind('s1', 't1')
    expect(await text(join(workspace, 'gone.txt'))).toBe('keep me')
  })

  it('skips and reports a file that changed since the edit, never clobbering it', async () => {
    const { ctx, workspace, edit } = await setup()
    await edit('t1', 'a.txt', 'agent')
    await writeFile(join(workspace, 'a.txt'), 'person')
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => [item.path, item.action])).toEqual([['a.txt', 'drifted']])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(names(result.drifted)).toEqual(['a.txt'])
    expect(await text(join(workspace, 'a.txt'))).toBe('person')
  })

  it('reports a file changed between two recorded edits as drifted', async () => {
    const { ctx, workspace, edit } = await setup()
    await writeFile(join(workspace, 'a.txt'), 'a0')
    await edit('t1', 'a.txt', 'a1')
    await writeFile(join(workspace, 'a.txt'), 'bash')
    await edit('t2', 'a.txt', 'a2')
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.drifted.map((item) => item.reason)).toEqual(['changed between the recorded edits'])
    expect(await text(join(workspace, 'a.txt'))).toBe('a2')
  })

  it('reports a file already at its old content as already restored, and a second rewind does nothing', async () => {
    const { ctx, workspace, edit } = await setup()
    await writeFile(join(workspace, 'a.txt'), 'a0')
    await edit('t1', 'a.txt', 'a1')
    await edit('t1', 'b.txt', 'b1')
    await writeFile(join(workspace, 'a.txt'), 'a0')
    const first = await ctx.checkpoints.rewind('s1', 't1')
    expect([names(first.restored), names(first.already)]).toEqual([['b.txt'], ['a.txt']])
    const second = await ctx.checkpoints.rewind('s1', 't1')
    expect([names(second.restored), names(second.already)]).toEqual([[], ['a.txt', 'b.txt']])
  })

  it('skips a target that is now a symbolic link and leaves what it points to alone', async () => {
    const { ctx, workspace, edit } = await setup()
    const outside = join(await tempRoot(), 'outside.txt')
    await writeFile(outside, 'a1')
    await writeFile(join(workspace, 'a.txt'), 'a0')
    await edit('t1', 'a.txt', 'a1')
    await rm(join(workspace, 'a.txt'))
    await symlink(outside, join(workspace, 'a.txt'))
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.skipped.map((item) => [item.path, item.reason])).toEqual([['a.txt', 'is now a symbolic link']])
    expect(await text(outside)).toBe('a1')
  })

  it('skips a file replaced by a directory', async () => {
    const { ctx, workspace, edit } = await setup()
    await edit('t1', 'a.txt', 'a1')
    await rm(join(workspace, 'a.txt'))
    await mkdir(join(workspace, 'a.txt'))
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.skipped.map((item) => item.reason)).toEqual(['is now a directory'])
    expect((await stat(join(workspace, 'a.txt'))).isDirectory()).toBe(true)
  })

  it('says a restored file\'s other hard links keep what the turn left (the restore gives this name a file of its own), never writing through them', async () => {
    const { ctx, workspace, edit } = await setup()
    const elsewhere = join(await tempRoot(), 'notes.txt')
    await writeFile(join(workspace, 'a.txt'), 'a0')
    await link(join(workspace, 'a.txt'), elsewhere)
    await edit('t1', 'a.txt', 'a1')
    expect(await text(elsewhere)).toBe('a1')
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => [item.action, item.reason])).toEqual([['restore', 'another name of this file (a hard link) keeps what the turns left unless this rewind restores it too: this name gets a file of its own']])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.restored.map((item) => item.reason)).toEqual(['another name of this file (a hard link) keeps what the turns left unless this rewind restores it too: this name gets a file of its own'])
    expect(await text(join(workspace, 'a.txt'))).toBe('a0')
    expect(await text(elsewhere)).toBe('a1')
  })

  it('removes a created file with a second name (a hard link) saying the other name keeps what the turn left, as a restore says', async () => {
    const { ctx, workspace, edit } = await setup()
    const elsewhere = join(await tempRoot(), 'kept.txt')
    await edit('t1', 'new.txt', 'made')
    await link(join(workspace, 'new.txt'), elsewhere)
    const note = 'another name of this file (a hard link) keeps what the turns left unless this rewind undoes it too: only this name is removed'
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => [item.action, item.reason])).toEqual([['remove', note]])
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.restored.map((item) => [item.action, item.reason])).toEqual([['remove', note]])
    expect(await text(join(workspace, 'new.txt'))).toBeNull()
    expect(await text(elsewhere)).toBe('made')
  })

  it('counts the other names of a removed file with several hard links, and a folder made for it still gets its own note after', async () => {
    const { ctx, workspace } = await setup()
    const outside = await tempRoot()
    await mkdir(join(workspace, 'gen'))
    await ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: 'gen/new.txt', existed: false, before: null, after: Buffer.from('made'), createdFolders: 1 })
    await writeFile(join(workspace, 'gen', 'new.txt'), 'made')
    await link(join(workspace, 'gen', 'new.txt'), join(outside, 'one.txt'))
    await link(join(workspace, 'gen', 'new.txt'), join(outside, 'two.txt'))
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.restored).toHaveLength(1)
    expect(result.restored[0]?.reason).toMatch(/^2 other names of this file \(hard links\) keep what the turns left unless this rewind undoes them too: only this name is removed; /)
    expect(result.restored[0]?.folders).toMatchObject([{ path: 'gen', action: 'remove' }])
    expect(await text(join(outside, 'two.txt'))).toBe('made')
  })

  it('keeps going when one file fails: a damaged blob fails that file only', async () => {
    const store = new MemoryCheckpointStore()
    const { ctx, workspace, edit } = await setup(store)
    await writeFile(join(workspace, 'bad.txt'), 'bad0')
    await writeFile(join(workspace, 'good.txt'), 'good0')
    await edit('t1', 'good.txt', 'good1')
    await edit('t1', 'bad.txt', 'bad1')
    await edit('t1', 'late.txt', 'late1')
    const damaged = contentHash(Buffer.from('bad0'))
    const blob = store.blob.bind(store)
    store.blob = async (sessionId, hash) => hash === damaged ? Buffer.from('rotten') : blob(sessionId, hash)
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.failed.map((item) => [item.path, item.error])).toEqual([['bad.txt', expect.stringMatching(/^CHECKPOINT_BLOB_DAMAGED/)]])
    expect(names(result.restored)).toEqual(['good.txt', 'late.txt'])
    expect(await text(join(workspace, 'bad.txt'))).toBe('bad1')
    expect(await text(join(workspace, 'good.txt'))).toBe('good0')
  })

  it('plans a file whose stored content is missing or damaged as not restorable when asked to check the contents, as the rewind then fails it', async () => {
    const store = new MemoryCheckpointStore()
    const { ctx, workspace, edit } = await setup(store)
    for (const name of ['gone', 'bad', 'good']) await writeFile(join(workspace, `${name}.txt`), `${name}0`)
    for (const name of ['gone', 'bad', 'good']) await edit('t1', `${name}.txt`, `${name}1`)
    const [gone, bad] = ['gone0', 'bad0'].map((content) => contentHash(Buffer.from(content)))
    const blob = store.blob.bind(store)
    store.blob = async (sessionId, hash) => {
      if (hash === gone) throw new ReinError('CHECKPOINT_BLOB_MISSING', `checkpoint content ${hash} is missing`)
      return hash === bad ? Buffer.from('rotten') : blob(sessionId, hash)
    }
    const plan = await ctx.checkpoints.plan('s1', 't1', { checkContents: true })
    const planned = Object.fromEntries(plan.items.map((item) => [item.path, [item.action, item.reason?.split(':')[0]]]))
    expect(planned).toEqual({ 'good.txt': ['restore', undefined], 'bad.txt': ['skipped', 'cannot be restored'], 'gone.txt': ['skipped', 'cannot be restored'] })
    expect(plan.items.find((item) => item.path === 'gone.txt')?.reason).toMatch(/^cannot be restored: CHECKPOINT_BLOB_MISSING: /)
    expect(plan.items.find((item) => item.path === 'bad.txt')?.reason).toMatch(/^cannot be restored: CHECKPOINT_BLOB_DAMAGED: /)
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(names(result.failed)).toEqual(['bad.txt', 'gone.txt'])
    expect(names(result.restored)).toEqual(['good.txt'])
  })

  it('reads each stored content once in a real rewind, not twice: the plan before it reads none unless asked to check them', async () => {
    const store = new MemoryCheckpointStore()
    const { ctx, workspace, edit } = await setup(store)
    for (let index = 0; index < 5; index++) {
      await writeFile(join(workspace, `f${index}.txt`), `old${index}`)
      await edit('t1', `f${index}.txt`, `new${index}`)
    }
    let reads = 0
    const blob = store.blob.bind(store)
    store.blob = async (sessionId, hash) => {
      reads++
      return blob(sessionId, hash)
    }
    const counted = async (body: () => Promise<unknown>) => {
      const start = reads
      await body()
      return reads - start
    }
    // What `rein rewind --dry-run` asks, and what `rein rewind` does: a plan, then the rewind.
    expect(await counted(() => ctx.checkpoints.plan('s1', 't1', { checkContents: true }))).toBe(5)
    expect(await counted(() => ctx.checkpoints.plan('s1', 't1'))).toBe(0)
    expect(await counted(() => ctx.checkpoints.rewind('s1', 't1'))).toBe(5)
    expect(await text(join(workspace, 'f0.txt'))).toBe('old0')
  })

  it('keeps the mode of the file it restores', async () => {
    const { ctx, workspace, edit } = await setup()
    await writeFile(join(workspace, 'run.sh'), 'v0')
    await chmod(join(workspace, 'run.sh'), 0o750)
    await edit('t1', 'run.sh', 'v1')
    await ctx.checkpoints.rewind('s1', 't1')
    expect((await stat(join(workspace, 'run.sh'))).mode & 0o777).toBe(0o750)
  })

  it('restores a file whose name is as long as the file system allows (255 bytes)', async () => {
    const { ctx, workspace, edit } = await setup()
    const name = '記'.repeat(85)
    await writeFile(join(workspace, name), 'mine')
    await edit('t1', name, 'agent')
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.failed).toEqual([])
    expect(await text(join(workspace, name))).toBe('mine')
  })

  it('gives an empty plan and result for an anchor with no records', async () => {
    const { ctx, edit } = await setup()
    await edit('t1', 'a.txt', 'a1')
    expect((await ctx.checkpoints.plan('s1', 'unknown')).items).toEqual([])
    expect(await ctx.checkpoints.rewind('s1', 'unknown')).toMatchObject({ restored: [], already: [], drifted: [], skipped: [], failed: [] })
    expect((await ctx.checkpoints.plan('other-session', 't1')).items).toEqual([])
  })

  it('plans without changing anything', async () => {
    const { ctx, workspace, edit } = await setup()
    await edit('t1', 'a.txt', 'a1')
    const plan = await ctx.checkpoints.plan('s1', 't1')
    expect(plan.items.map((item) => [item.path, item.action])).toEqual([['a.txt', 'remove']])
    expect(await text(join(workspace, 'a.txt'))).toBe('a1')
  })
})

describe('after a rewind that was killed mid-write', () => {
  it('leaves no temporary copy a killed rewind made once the next rewind is done, and never removes a live process\'s', async () => {
    const { ctx, workspace, edit } = await setup()
    await writeFile(join(workspace, 'a.txt'), 'a0')
    await edit('t1', 'a.txt', 'a1')
    // What a kill between the temporary file's write and its rename leaves beside the file.
    const dead = spawnSync('true').pid
    const leftover = join(workspace, `.a.txt.rein-rewind-${dead}.0b6f3c2e-9f1d-4d2a-8c55-2f0e8a1b7c3d.tmp`)
    await writeFile(leftover, 'a0')
    const someoneElses = join(workspace, '.a.txt.rein-rewind-notes.tmp')
    await writeFile(someoneElses, 'not ours')
    // A live process's copy: it may be rewinding the same file (another session) right now.
    const live = join(workspace, `.a.txt.rein-rewind-${process.ppid}.0b6f3c2e-9f1d-4d2a-8c55-2f0e8a1b7c3d.tmp`)
    await writeFile(live, 'in flight')
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(names(result.restored)).toEqual(['a.txt'])
    expect(await text(leftover)).toBeNull()
    expect(await text(someoneElses)).toBe('not ours')
    expect(await text(live)).toBe('in flight')
    // Again, now that the file is already back: what an earlier kill left goes too.
    await writeFile(leftover, 'a0')
    expect(names((await ctx.checkpoints.rewind('s1', 't1')).already)).toEqual(['a.txt'])
    expect(await text(leftover)).toBeNull()
  })
})
