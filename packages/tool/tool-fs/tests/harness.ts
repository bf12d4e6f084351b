// Shared setup: a temp folder per test holding the workspace, an outside tree, and a spill folder;
// the registry with tool-fs loaded; calls made the way the agent makes them.
import { createHash } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, lstatSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import ToolRegistry, { type ToolCallContext, type ToolResult } from '@rein/tools'
import { afterEach, beforeEach } from 'vitest'
import * as toolFs from '../src/index.ts'
import { createFsTools, registerFsTools, resolveFsConfig, type WriteHooks } from '../src/index.ts'

export interface Folders {
  /** The temp folder holding the rest. */
  base: string
  workspace: string
  outside: string
  spill: string
}

/** A fresh set of folders per test, removed after it. */
export function useFolders(): () => Folders {
  let folders: Folders | undefined
  beforeEach(() => {
    const base = mkdtempSync(join(tmpdir(), 'rein-fs-'))
    folders = { base, workspace: join(base, 'ws'), outside: join(base, 'outside'), spill: join(base, 'spill') }
    for (const dir of [folders.workspace, folders.outside, folders.spill]) mkdirSync(dir)
  })
  afterEach(() => {
    if (folders) rmSync(folders.base, { recursive: true, force: true })
    folders = undefined
  })
  return () => {
    if (!folders) throw new Error('folders are made in beforeEach')
    return folders
  }
}

export interface BootOptions {
  config?: Partial<toolFs.Config>
  /** Build the tools with these test hooks instead of loading the plugin. */
  hooks?: WriteHooks
}

/** The registry (asking for nothing) with the fs tools; `call` runs one as an agent in `sessionId` would, cancelled by `signal`. */
export async function boot(folders: Folders, options: BootOptions = {}) {
  const root = new Context()
  await root.plugin(ToolRegistry, { askFor: [] })
  let fiber: Fiber
  if (options.hooks) {
    const tools = createFsTools({ config: resolveFsConfig(options.config), hooks: options.hooks })
    fiber = await root.plugin({
      name: 'fs-with-hooks',
      inject: ['tools'],
      apply: (ctx: Context) => registerFsTools(ctx.tools, tools),
    })
  } else {
    fiber = await root.plugin(toolFs, options.config ?? {})
  }
  let n = 0
  const call = (name: string, args: Record<string, unknown>, context: ToolCallContext = {}, signal: AbortSignal = new AbortController().signal): Promise<ToolResult> => root.tools.execute({
    callId: `call-${++n}`,
    name,
    arguments: JSON.stringify(args),
    signal,
    context: { sessionId: 'session-a', cwd: folders.workspace, workspaceRoot: folders.workspace, spillFolder: folders.spill, ...context },
  })
  return { root, fiber, call }
}

/** The text the model reads. */
export function text(result: ToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n')
}

/** The error code, or `ok`. */
export function codeOf(result: ToolResult): string {
  return result.isError ? result.error.code : 'ok'
}

/** Every entry under `dir` (links not followed) with what it holds: a file's hash and mode, a link's target. */
export function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const visit = (folder: string) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name)
      const info = lstatSync(path)
      const key = relative(dir, path)
      if (info.isSymbolicLink()) out[key] = `link -> ${readlinkSync(path)}`
      else if (info.isDirectory()) {
        out[key] = `dir ${(info.mode & 0o7777).toString(8)}`
        visit(path)
      } else out[key] = `file ${(info.mode & 0o7777).toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`
    }
  }
  visit(dir)
  return out
}

export function write(path: string, content: string | Buffer) {
  writeFileSync(path, content)
}
