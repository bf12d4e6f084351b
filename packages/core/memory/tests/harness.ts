/** A real cordis Context with @rein/tools, @rein/memory and an in-memory store plugin, in temp folders. */

import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context, Service } from '@deepseek-ai/cordis'
import { ToolRegistry, type RunIdentity, type ToolResult } from '@rein/tools'
import { afterAll, beforeAll } from 'vitest'
import { InMemoryMemoryStore, MemoryService, type MemoryScope } from '../src/index.ts'
import type { MemoryConfig } from '../src/config.ts'
import type { MemorySection } from '../src/section.ts'

/** What a test may give the memory row. */
export type ConfigInput = Parameters<typeof MemoryConfig>[0]

/** REIN_HOME and the workspaces tests use, in one temp folder removed after the file's tests. */
export function useTempHome(): { folder(name: string): string } {
  let root = ''
  let previous: string | undefined
  beforeAll(() => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'rein-memory-')))
    previous = process.env.REIN_HOME
    process.env.REIN_HOME = join(root, 'home')
  })
  afterAll(() => {
    if (previous === undefined) delete process.env.REIN_HOME
    else process.env.REIN_HOME = previous
    rmSync(root, { recursive: true, force: true })
  })
  return { folder: (name) => join(root, name) }
}

export const identity: RunIdentity = Object.freeze({
  agent: 'main', sessionId: 's1', conversationId: 's1', runId: 'run-1', turnId: 's1/1', anchor: 'msg-1', depth: 0,
})

/** A plugin that registers `store` on `ctx.memory` for as long as it is loaded. */
export function storePlugin(store: InMemoryMemoryStore) {
  return { name: 'memory-store', inject: ['memory'], apply: (ctx: Context) => { ctx.memory.registerStore(store) } }
}

/**
 * tools (nothing asks for approval; a policy's question is answered yes, after `asked` sees it),
 * memory with `config`, and optionally a store.
 */
export async function setup(config: ConfigInput = {}, withStore = true, asked: unknown[] = []) {
  const ctx = new Context()
  await ctx.plugin(ToolRegistry, { askFor: [] })
  ctx.provide('approval', { request: (request: unknown) => { asked.push(request); return 'allow' as const } })
  const memoryFiber = await ctx.plugin(MemoryService, config)
  const store = new InMemoryMemoryStore()
  const storeFiber = withStore ? await ctx.plugin(storePlugin(store)) : undefined
  let calls = 0
  const call = (name: string, args: Record<string, unknown>, context: { identity?: RunIdentity; workspaceRoot?: string; sessionId?: string } = { identity }) =>
    ctx.tools.execute({ callId: `call-${++calls}`, name, arguments: JSON.stringify(args), signal: new AbortController().signal, context })
  return { ctx, store, memoryFiber, storeFiber, call }
}

/** The text the model reads from a result. */
export function text(result: ToolResult): string {
  return result.content.map((part) => part.type === 'text' ? part.text : `[${part.type}]`).join('\n')
}

/** A draft with the given changes. */
export function draft(changes: Record<string, unknown> = {}) {
  return { scope: 'user' as const, type: 'preference' as const, content: 'Prefers pnpm over npm.', source: { sessionId: 's1' }, ...changes }
}

/** What @rein/agent's `AgentOptions.memory` holds. */
export interface AgentMemory { read?: MemoryScope[]; write?: MemoryScope[] }

/**
 * Stands in for @rein/agent's ctx.agents (not a dependency here): holds sections; `find` gives a
 * live agent that answers canUse and carries the options it was created with (`created`).
 */
export class AgentsStandIn extends Service {
  _sections: MemorySection[] = []
  _hidden = new Set<string>()
  /** Per session id: the `memory` option its agent was created with. */
  created = new Map<string, { memory?: AgentMemory }>()
  constructor(ctx: Context) {
    super(ctx, 'agents')
  }

  section(section: MemorySection) {
    const sections = this._sections
    return this.ctx.effect(() => {
      sections.push(section)
      return () => { sections.splice(sections.indexOf(section), 1) }
    }, 'agents.section')
  }

  find(sessionId: string) {
    return { canUse: (name: string) => !this._hidden.has(name), options: this.created.get(sessionId) ?? {} }
  }
}
