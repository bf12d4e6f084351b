// Retention at session end, in the composition rein runs: @rein/session with @rein/session-jsonl,
// @rein/checkpoint with this store, loaded from a cordis.yml by package name.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { useCordisYml } from '@rein/testkit'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { BLOB_FOLDER, JsonlCheckpointStore, LOG_FILE } from '../src/index.ts'
import { tempRoot } from './temp-root.ts'

const yml = useCordisYml(afterEach, fileURLToPath(new URL('..', import.meta.url)))

beforeEach(async () => {
  vi.stubEnv('REIN_HOME', await tempRoot())
})
afterEach(() => {
  vi.unstubAllEnvs()
})

async function compose(checkpointConfig: readonly string[]) {
  const root = await tempRoot()
  const { ctx } = await yml.load(yml.write([
    '- id: tools',
    "  name: '@rein/tools'",
    '- id: sessions',
    "  name: '@rein/session'",
    '- id: session-store',
    "  name: '@rein/session-jsonl'",
    '  config:',
    `    root: ${JSON.stringify(root)}`,
    '- id: checkpoints',
    "  name: '@rein/checkpoint'",
    ...(checkpointConfig.length > 0 ? ['  config:', ...checkpointConfig.map((line) => `    ${line}`)] : []),
    '- id: checkpoint-store',
    "  name: '@rein/checkpoint-jsonl'",
  ]))
  const logged = () => ctx.root.logger.buffer.filter((message) => message.name === 'checkpoint').map((message) => message.args)
  return { ctx, logged, root }
}

describe('retention at session end', () => {
  it('compacts a session\'s checkpoints as it closes: older turns and the contents only they named go, and it says so', async () => {
    const { ctx, logged } = await compose(['keepTurns: 2'])
    const session = await ctx.sessions.create({ id: 's1', cwd: '/w' })
    for (const [anchor, content] of [['t1', 'one'], ['t2', 'two'], ['t3', 'three'], ['t4', 'four']] as const) {
      await ctx.checkpoints.record('s1', { anchor, root: '/w', path: 'a.txt', existed: anchor !== 't1', before: anchor === 't1' ? null : Buffer.from(`before ${anchor}`), after: Buffer.from(content) })
    }
    const folder = await session.folder()
    await session.close()

    const store = new JsonlCheckpointStore({ folder: async () => folder })
    const records = await store.records('s1')
    await store.close()
    expect(records.map((record) => [record.anchor, record.seq])).toEqual([['t3', 3], ['t4', 4]])
    expect((await readdir(join(folder, BLOB_FOLDER))).length).toBe(4)
    expect(logged()).toEqual([expect.arrayContaining(['s1', 2, 2, 0, 0, ': t1, t2'])])
  })

  it('writes no checkpoint log for a session that recorded none', async () => {
    const { ctx, logged, root } = await compose([])
    const session = await ctx.sessions.create({ id: 's2', cwd: '/w' })
    session.append('turn/start', { turn: 1 })
    await session.close()
    // The compaction asked for the session's folder (session-jsonl makes it), but wrote nothing there.
    const files = await readdir(join(root, 's2.files')).catch(() => [])
    expect(files).not.toContain(LOG_FILE)
    expect(logged()).toEqual([])
  })

  it('leaves a session opened only to be read as it is, however many turns it holds', async () => {
    const { ctx, logged } = await compose(['keepTurns: 1'])
    const session = await ctx.sessions.create({ id: 's3', cwd: '/w' })
    session.append('turn/start', { turn: 1 })
    const folder = await session.folder()
    await session.close()
    // Two turns' records, made by an earlier process.
    const earlier = new JsonlCheckpointStore({ folder: async () => folder })
    for (const anchor of ['t1', 't2']) {
      await earlier.append('s3', { anchor, root: '/w', path: `${anchor}.txt`, existed: false, before: null, after: Buffer.from(anchor) })
    }
    await earlier.close()
    const log = await readFile(join(folder, LOG_FILE), 'utf8')
    // Opened (rein show, a dry run) and closed without recording: retention does not run.
    const again = await ctx.sessions.open('s3')
    expect((await ctx.checkpoints.plan('s3', 't1')).items).toHaveLength(2)
    await again.close()
    expect(await readFile(join(folder, LOG_FILE), 'utf8')).toBe(log)
    expect(logged()).toEqual([])
  })
})
