// A booted registry with the bash plugin, disposed after each test, and the text of a result.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import ToolRegistry, { type ToolResult } from '@rein/tools'
import { toolContextFixture, type ToolContextOverrides } from '@rein/testkit'
import { afterAll, afterEach } from 'vitest'
import * as bash from '../src/index.ts'

const fibers: { dispose(): unknown }[] = []
afterEach(async () => {
  for (const fiber of fibers.splice(0).reverse()) await fiber.dispose()
})
let calls = 0
// Spill files of this test file's calls: removed after it (a test worker may end without an 'exit').
const spillFolder = mkdtempSync(join(tmpdir(), 'rein-bash-spill-'))
afterAll(() => rmSync(spillFolder, { recursive: true, force: true }))

/** What `bootBash` gives a test. */
export interface BootedBash {
  root: Context
  fiber: Fiber
  /** Calls `bash` through the whole pipeline, as an agent does. */
  execute: (args: Record<string, unknown>, signal?: AbortSignal, context?: ToolContextOverrides) => Promise<ToolResult>
}

/** A registry that asks for nothing, with the bash plugin (short grace unless `config` says). */
export async function bootBash(config: Partial<bash.Config> = {}): Promise<BootedBash> {
  const root = new Context()
  fibers.push(await root.plugin(ToolRegistry, { askFor: [] }))
  const fiber = await root.plugin(bash, { killGraceMs: 200, ...config })
  fibers.push(fiber)
  await fiber.await()
  const execute = (args: Record<string, unknown>, signal = new AbortController().signal, context: ToolContextOverrides = {}): Promise<ToolResult> => {
    // A call id of its own: spill files are named after it, in one folder per test process.
    const run = toolContextFixture({ callId: `call_${++calls}`, spillFolder, ...context })
    return root.tools.execute({
      callId: run.callId, name: 'bash', arguments: JSON.stringify(args), signal,
      context: { cwd: run.cwd, workspaceRoot: run.workspaceRoot, spill: run.spill!, spillFolder: run.spillFolder!, ...(context.sessionId === undefined ? {} : { sessionId: context.sessionId }) },
    })
  }
  return { root, fiber, execute }
}

/** The model's text of a result. */
export function text(result: ToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n')
}
