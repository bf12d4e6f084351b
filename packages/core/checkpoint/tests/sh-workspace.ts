// A workspace with the checkpoint service and the `sh` tool, and a way to run a command in it as
// one turn's call: what the tests of commands that change files share.
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import ToolService from '@rein/tools'
import { expect, vi } from 'vitest'
import { CheckpointService, MemoryCheckpointStore } from '../src/index.ts'
import { identity, sh } from './fixtures/sh-tool.ts'
import { tempRoot } from './harness.ts'

/** `run(command, anchor)` runs `command` as a call of the turn `anchor` (default `m1`) and expects it to succeed. REIN_HOME is stubbed: unstub after each test. */
export async function shWorkspace() {
  const workspace = await tempRoot()
  vi.stubEnv('REIN_HOME', await tempRoot())
  const ctx = new Context()
  await ctx.plugin(ToolService, { askFor: [] })
  await ctx.plugin(CheckpointService, { snapshot: { folder: join(await tempRoot(), 'snapshots') } })
  const store = new MemoryCheckpointStore()
  ctx.checkpoints.registerStore(store)
  ctx.tools.register(sh)
  let calls = 0
  const run = async (command: string, anchor = 'm1') => {
    const result = await ctx.tools.execute({
      callId: `c${++calls}`, name: 'sh', arguments: JSON.stringify({ command }), signal: new AbortController().signal,
      context: { cwd: workspace, workspaceRoot: workspace, sessionId: 's1', identity: { ...identity, anchor } },
    })
    expect(result.isError).toBe(false)
  }
  return { ctx, store, workspace, run }
}
