/** A composition with ctx.checkpoints and a store, a temp workspace, and a way to edit as tool-fs will. */

import { lstat, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { afterEach } from 'vitest'
import { CheckpointService, MemoryCheckpointStore, type CheckpointStore } from '../src/index.ts'

const roots: string[] = []

afterEach(async () => {
  await Promise.all(roots.splice(0).map((root) => rm(root, { recursive: true, force: true })))
})

/** A fresh folder, removed after the test. */
export async function tempRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'rein-checkpoint-'))
  roots.push(root)
  return root
}

/** ctx.checkpoints with `store` (default: in memory) registered, over a fresh workspace. */
export async function setup(store: CheckpointStore = new MemoryCheckpointStore()) {
  const ctx = new Context()
  await ctx.plugin(CheckpointService, {})
  ctx.checkpoints.registerStore(store)
  const workspace = await tempRoot()
  /** Records the change, then makes it: what a covered tool does. `null` deletes the file. */
  const edit = async (anchor: string, path: string, content: string | null, sessionId = 's1') => {
    const file = join(workspace, path)
    const before = await readIfFile(file)
    await ctx.checkpoints.record(sessionId, {
      anchor, root: workspace, path, existed: before !== null, before, after: content === null ? null : Buffer.from(content),
    })
    if (content === null) await rm(file)
    else await writeFile(file, content)
  }
  return { ctx, workspace, edit, store }
}

/** The file's bytes, or `null` when it is absent or not a regular file. */
export async function readIfFile(file: string): Promise<Uint8Array | null> {
  try {
    if (!(await lstat(file)).isFile()) return null
    return await readFile(file)
  } catch {
    return null
  }
}

/** The file's text, or `null` when it is absent. */
export async function text(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8')
  } catch {
    return null
  }
}
