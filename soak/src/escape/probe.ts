/**
 * Runs escape cases against the real tools — tool-fs and bash, loaded as plugins into a registry that
 * asks for nothing — through `ctx.tools.execute`, as an agent calls them, and judges each by what
 * came back and what changed: a marker of the sentinel tree in the answer, a listed path whose real
 * place is outside, a command that ran outside, a write whose content is not in the workspace.
 */
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { isAbsolute, join, relative, resolve } from 'node:path'
import { Context, type Fiber } from '@deepseek-ai/cordis'
import { toolContextFixture } from '@rein/testkit'
import * as bash from '@rein/tool-bash'
import * as toolFs from '@rein/tool-fs'
import ToolRegistry, { type ToolResult } from '@rein/tools'
import { fill, type EscapeCase } from './corpus.ts'
import type { Ground } from './sentinel.ts'

/** What one call did. */
export interface Outcome {
  /** `ok`, the error code, or `THREW` when execute threw instead of answering. */
  readonly code: string
  /** How it got at something outside: a marker in the answer, a path listed, a command run there. */
  readonly readOutside: string[]
  /** What it changed outside (a write whose content is not in the workspace, a command's probe file). */
  readonly wroteOutside: string[]
  /** It returned the content of the file `hard-out` is a hard link to. */
  readonly hardRead: boolean
  /** The answer's text, for a report. */
  readonly text: string
}

/** A line of /etc/passwd: a read of the system's files shows it. */
const SYSTEM_MARKER = 'root:x:0:0'
/** What the bash probe runs in its workdir: read a secret, say where it is, leave a file. */
const BASH_PROBE = 'cat secret.txt 2>/dev/null; echo "PWD=$(pwd -P)"; : > .escape-probe'

/** The tools, booted for one ground; `call` runs one case once. */
export interface Prober {
  probe(escape: EscapeCase, options?: { racing?: boolean }): Promise<Outcome>
  dispose(): Promise<void>
}

let calls = 0

export async function bootProber(ground: Ground): Promise<Prober> {
  const root = new Context()
  const fibers: Fiber[] = []
  fibers.push(await root.plugin(ToolRegistry, { askFor: [] }))
  fibers.push(await root.plugin(toolFs, {}))
  const shell = await root.plugin(bash, { killGraceMs: 200 })
  await shell.await()
  fibers.push(shell)
  const wsReal = realpathSync(ground.ws)

  const execute = async (name: string, args: Record<string, unknown>): Promise<ToolResult | Error> => {
    const run = toolContextFixture({ callId: `call_escape_${++calls}`, spillFolder: ground.spill, cwd: ground.ws, workspaceRoot: ground.ws })
    try {
      return await root.tools.execute({
        callId: run.callId, name, arguments: JSON.stringify(args), signal: new AbortController().signal,
        context: { sessionId: 'soak-escape', cwd: ground.ws, workspaceRoot: ground.ws, spill: run.spill!, spillFolder: ground.spill },
      })
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error))
    }
  }

  const inside = (path: string) => {
    const rel = relative(wsReal, path)
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
  }

  /**
   * With `racing`, another process is changing the workspace: what a listed name or a write's
   * content is *now* says nothing of the call, so only the answer's content (and the sentinel
   * tree's hashes, taken by the caller) judge it.
   */
  async function probe(escape: EscapeCase, options: { racing?: boolean } = {}): Promise<Outcome> {
    const args = fill(escape.args, ground)
    const token = `WRITTEN-${++calls}-${Date.now().toString(36)}`
    if (escape.tool === 'write') args.content = token
    if (escape.tool === 'edit') args.new_string = token
    if (escape.tool === 'bash') Object.assign(args, { command: BASH_PROBE, description: 'Probe the workdir' })
    if (escape.readFirst && typeof args.path === 'string') await execute('read', { path: args.path })
    const result = await execute(escape.tool, args)
    if (result instanceof Error) return { code: 'THREW', readOutside: [], wroteOutside: [], hardRead: false, text: result.message }
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n')
    const seen = `${text}\n${result.isError ? '' : JSON.stringify(result.value ?? null)}`
    const readOutside: string[] = []
    const wroteOutside: string[] = []
    if (seen.includes(ground.marker)) readOutside.push('the sentinel marker is in the answer')
    if (seen.includes(SYSTEM_MARKER)) readOutside.push('/etc/passwd is in the answer')
    const hardRead = seen.includes(ground.hardMarker)
    // Through its name inside (`hard-out`, named in the call or, for a search, in the answer) the
    // hard-linked file is the workspace's own; any other way to it went out.
    if (hardRead && !escape.hardLink && !`${JSON.stringify(args)}${seen}`.includes('hard-out')) readOutside.push('the hard-linked outside file is in the answer')
    if (!result.isError && !options.racing && (escape.tool === 'glob' || escape.tool === 'grep')) {
      for (const listed of listedPaths(result.value)) {
        const base = typeof args.path === 'string' ? resolve(ground.ws, args.path) : ground.ws
        for (const candidate of [resolve(ground.ws, listed), resolve(base, listed)]) {
          const real = realOrUndefined(candidate)
          if (real !== undefined && !inside(real)) readOutside.push(`listed ${listed}, which is ${real}`)
        }
      }
    }
    if (escape.tool === 'bash') {
      // Empty when the shell could not tell (its folder was deleted under it): no place to judge.
      const where = /^PWD=(.+)$/m.exec(text)?.[1]
      if (where !== undefined) {
        const probeFile = join(where, '.escape-probe')
        if (!inside(where)) {
          readOutside.push(`the command ran in ${where}`)
          if (existsSync(probeFile)) wroteOutside.push(`the command wrote ${probeFile}`)
        }
        rmSync(probeFile, { force: true })
      }
    }
    if (!result.isError && (escape.tool === 'write' || escape.tool === 'edit') && !options.racing && !holds(ground.ws, token)) {
      wroteOutside.push(`${escape.tool} reported success but what it wrote is nowhere in the workspace`)
    }
    return { code: result.isError ? result.error.code : 'ok', readOutside, wroteOutside, hardRead, text }
  }

  return {
    probe,
    dispose: async () => {
      for (const fiber of fibers.reverse()) await fiber.dispose()
    },
  }
}

/** The paths a glob or grep answer lists. */
function listedPaths(value: unknown): string[] {
  const files = (value as { files?: unknown } | null)?.files
  if (!Array.isArray(files)) return []
  return files.map((file: unknown) => (typeof file === 'string' ? file : (file as { path?: unknown } | null)?.path)).filter((path): path is string => typeof path === 'string')
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path)
  } catch {
    return undefined
  }
}

/** Whether a file under `dir` (links not followed) contains `token`. */
function holds(dir: string, token: string): boolean {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    const info = lstatSync(path)
    if (info.isDirectory() && holds(path, token)) return true
    if (info.isFile() && readFileSync(path, 'utf8').includes(token)) return true
  }
  return false
}
