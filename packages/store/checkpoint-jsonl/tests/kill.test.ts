import { spawn } from 'node:child_process'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import CheckpointService from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { JsonlCheckpointStore } from '../src/index.ts'
import { tempRoot } from './temp-root.ts'

const CHILD = new URL('./fixtures/rewind-child.ts', import.meta.url).pathname
const FILES = 300

async function compose(base: string) {
  const ctx = new Context()
  await ctx.plugin(CheckpointService, {})
  const store = new JsonlCheckpointStore({ folder: async (id) => { await mkdir(join(base, id), { recursive: true }); return join(base, id) } })
  ctx.checkpoints.registerStore(store)
  return { ctx, store }
}

describe('a rewind killed with SIGKILL', () => {
  it('leaves every file at its old or new content, and a second rewind finishes the job', async () => {
    const base = await tempRoot()
    const workspace = await tempRoot()
    const first = await compose(base)
    const old = (index: number) => `old ${index} `.repeat(2000)
    const edited = (index: number) => `new ${index} `.repeat(2000)
    for (let index = 0; index < FILES; index++) {
      const file = join(workspace, `f${index}.txt`)
      await writeFile(file, old(index))
      await first.ctx.checkpoints.record('s1', { anchor: 't1', root: workspace, path: `f${index}.txt`, existed: true, before: Buffer.from(old(index)), after: Buffer.from(edited(index)) })
      await writeFile(file, edited(index))
    }
    await first.store.close()

    const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', CHILD, base], { stdio: ['ignore', 'pipe', 'inherit'] })
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)))
    await new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => { if (chunk.toString().includes('rewinding')) resolve() }))
    // Newest first: f299 goes back first. Kill once it has, so the kill lands among the writes.
    const last = join(workspace, `f${FILES - 1}.txt`)
    while (child.exitCode === null && await readFile(last, 'utf8') !== old(FILES - 1)) await new Promise((resolve) => setTimeout(resolve, 1))
    child.kill('SIGKILL')
    // The kill ended the child, not the end of its rewind.
    expect(await exited).toBe('SIGKILL')

    const contents = await Promise.all(Array.from({ length: FILES }, (_, index) => readFile(join(workspace, `f${index}.txt`), 'utf8')))
    contents.forEach((content, index) => expect([old(index), edited(index)]).toContain(content))
    // It landed among the writes: some files went back, some not yet.
    expect(contents.filter((content, index) => content === edited(index)).length).toBeGreaterThan(0)
    expect(contents.filter((content, index) => content === old(index)).length).toBeGreaterThan(0)
    const second = await compose(base)
    const result = await second.ctx.checkpoints.rewind('s1', 't1')
    expect(result.restored.length + result.already.length).toBe(FILES)
    expect([result.drifted, result.skipped, result.failed]).toEqual([[], [], []])
    for (let index = 0; index < FILES; index++) expect(await readFile(join(workspace, `f${index}.txt`), 'utf8')).toBe(old(index))
    expect((await readdir(workspace)).filter((name) => !name.endsWith('.tmp'))).toHaveLength(FILES)
    await second.store.close()
  }, 60_000)
})
