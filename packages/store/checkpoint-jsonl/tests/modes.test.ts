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
