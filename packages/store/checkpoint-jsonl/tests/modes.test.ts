// Records keep the permission bits of the file they changed, so a rewind that must create a
// deleted file again gives it its mode back: a 0600 secret stays private, a 0755 script runs.
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { CheckpointService, contentHash, type CheckpointEntry } from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { LOG_FILE } from '../src/index.ts'
import { openStore, tempRoot } from './temp-root.ts'

const open = async (base: string) => (await openStore({}, base)).store

function deleted(path: string, before: string, mode?: number): CheckpointEntry {
  return { anchor: 't1', root: '/w', path, existed: true, before: Buffer.from(before), after: null, ...(mode === undefined ? {} : { mode }) }
}

const hashOf = (text: string) => contentHash(Buffer.from(text))

describe('JsonlCheckpointStore and permission bits', () => {
  it('round-trips mode through the log, across a reopen and a compaction', async () => {
    const base = await tempRoot()
    const store = await open(base)
    await store.append('s1', deleted('secrets.json', 's', 0o600))
    await store.append('s1', deleted('run.sh', 'r', 0o755))
    await store.append('s1', deleted('plain', 'p'))
    await store.close()
    const lines = (await readFile(join(base, 's1', LOG_FILE), 'utf8')).trim().split('\n').map((line) => JSON.parse(line))
    expect(lines.map((line) => line.mode)).toEqual([0o600, 0o755, undefined])
    expect('mode' in lines[2]).toBe(false)
    const again = await open(base)
    expect((await again.records('s1')).map((record) => record.mode)).toEqual([0o600, 0o755, undefined])
    await again.append('s1', { ...deleted('later', 'l', 0o640), anchor: 't2' })
    await again.compact('s1', new Set(['t1']), { seenThrough: 3 })
    await again.close()
    const compacted = await open(base)
    expect((await compacted.records('s1')).map((record) => [record.path, record.mode])).toEqual([['secrets.json', 0o600], ['run.sh', 0o755], ['plain', undefined], ['later', 0o640]])
    await compacted.compact('s1', new Set(['t2']))
    expect((await compacted.records('s1')).map((record) => [record.path, record.mode])).toEqual([['later', 0o640]])
  })

  it('still reads lines written before records kept a mode', async () => {
    const base = await tempRoot()
    await mkdir(join(base, 's1'), { recursive: true })
    const old = { anchor: 't1', seq: 1, root: '/w', path: 'a', existed: true, before: hashOf('a'), after: null, at: 1 }
    await writeFile(join(base, 's1', LOG_FILE), `${JSON.stringify(old)}\n`)
    const store = await open(base)
    const [record] = await store.records('s1')
    expect(record).toEqual(old)
    expect(record && 'mode' in record).toBe(false)
    expect((await store.append('s1', deleted('b', 'b', 0o700))).mode).toBe(0o700)
  })

  it('refuses a line whose mode is not permission bits as damage', async () => {
    for (const mode of [-1, 0o10000, 4.5, '644']) {
      const base = await tempRoot()
      await mkdir(join(base, 's1'), { recursive: true })
      const bad = { anchor: 't1', seq: 1, root: '/w', path: 'a', existed: true, before: hashOf('a'), after: null, at: 1, mode }
      const good = { ...bad, seq: 2, mode: 0o644 }
      await writeFile(join(base, 's1', LOG_FILE), `${JSON.stringify(bad)}\n${JSON.stringify(good)}\n`)
      await expect((await open(base)).records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED' })
    }
  })

  it('brings a deleted 0600 file and a deleted 0755 file back with their modes through a rewind', async () => {
    const base = await tempRoot()
    const workspace = join(base, 'workspace')
    await mkdir(workspace)
    const ctx = new Context()
    await ctx.plugin(CheckpointService, {})
    ctx.checkpoints.registerStore(await open(join(base, 'sessions')))
    const files = { 'secrets.json': 0o600, 'run.sh': 0o755 }
    for (const [path, mode] of Object.entries(files)) {
      const file = join(workspace, path)
      await writeFile(file, `content of ${path}`)
      await chmod(file, mode)
      await ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path, existed: true, before: await readFile(file), after: null, mode: (await stat(file)).mode & 0o7777 })
      await rm(file)
    }
    const result = await ctx.checkpoints.rewind('s1', 't1')
    expect(result.failed).toEqual([])
    for (const [path, mode] of Object.entries(files)) {
      expect(await readFile(join(workspace, path), 'utf8')).toBe(`content of ${path}`)
      expect((await stat(join(workspace, path))).mode & 0o7777).toBe(mode)
    }
  })
})

describe('JsonlCheckpointStore and a change of permissions (modeAfter)', () => {
  /** A chmod as a snapshot records it: both modes, and the gap builds from before `modeAfter` read. */
  const chmodded = (path: string, mode: number, modeAfter: number, anchor = 't1'): CheckpointEntry => ({
    anchor, root: '/w', path, existed: true, before: null, after: null, mode, modeAfter,
    gap: `its permissions changed from 0${mode.toString(8)} to 0${modeAfter.toString(8)} (a rewind does not undo a change of permissions)`,
  })

  it('keeps the mode after the change across a reopen and a compaction, so a rewind from the log can give the earlier one back', async () => {
    const base = await tempRoot()
    const store = await open(base)
    await store.append('s1', chmodded('secret.txt', 0o600, 0o666))
    await store.append('s1', chmodded('run.sh', 0o644, 0o755, 't2'))
    await store.close()
    const lines = (await readFile(join(base, 's1', LOG_FILE), 'utf8')).trim().split('\n').map((line) => JSON.parse(line))
    expect(lines.map((line) => [line.mode, line.modeAfter])).toEqual([[0o600, 0o666], [0o644, 0o755]])
    const again = await open(base)
    expect((await again.records('s1')).map((record) => [record.path, record.mode, record.modeAfter])).toEqual([['secret.txt', 0o600, 0o666], ['run.sh', 0o644, 0o755]])
    await again.compact('s1', new Set(['t2']))
    await again.close()
    expect((await (await open(base)).records('s1')).map((record) => [record.path, record.modeAfter])).toEqual([['run.sh', 0o755]])
  })

  it('reads a chmod line written before modeAfter as it was, without one', async () => {
    const base = await tempRoot()
    await mkdir(join(base, 's1'), { recursive: true })
    const old = { anchor: 't1', seq: 1, root: '/w', path: 'a', existed: true, before: null, after: null, at: 1, gap: 'its permissions changed from 0600 to 0666 (a rewind does not undo a change of permissions)' }
    await writeFile(join(base, 's1', LOG_FILE), `${JSON.stringify(old)}\n`)
    const [record] = await (await open(base)).records('s1')
    expect(record).toEqual(old)
  })

  it('refuses a line whose modeAfter is not permission bits, or comes without mode, as damage', async () => {
    const line = { anchor: 't1', seq: 1, root: '/w', path: 'a', existed: true, before: null, after: null, at: 1, gap: 'its permissions changed from 0600 to 0666 (a rewind does not undo a change of permissions)' }
    for (const bad of [{ mode: 0o600, modeAfter: 0o10000 }, { mode: 0o600, modeAfter: '666' }, { modeAfter: 0o666 }]) {
      const base = await tempRoot()
      await mkdir(join(base, 's1'), { recursive: true })
      await writeFile(join(base, 's1', LOG_FILE), `${JSON.stringify({ ...line, ...bad })}\n`)
      await expect((await open(base)).records('s1')).rejects.toMatchObject({ code: 'CHECKPOINT_LOG_DAMAGED' })
    }
  })
})
