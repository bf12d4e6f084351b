// Scratch: the snippets of docs/writing-a-tool.md, typechecked and run. Delete before finishing.
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { isAbsolute, join, relative, resolve } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Context } from '@deepseek-ai/cordis'
import ToolRegistry, { ReinError, defineTool } from '@rein/tools'
import { toolContextFixture } from '@rein/testkit'
import { expect, it } from 'vitest'

// --- snippet: the tool ---
export const runScript = defineTool({
  name: 'run_script',
  description: 'Runs a Node.js script from the workspace; reports its exit code and the end of its output.',
  parameters: { path: { type: 'string', required: true, description: 'the script, relative to the working directory' } },
  output: {
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        exitCode: { type: 'integer', required: true },
        tail: { type: 'string', required: true },
        log: { type: 'string' },
      },
    },
    render: (args, value) => [
      `${args.path} exited with code ${value.exitCode}. Last output:`,
      value.tail,
      ...(value.log ? [`Whole output: ${value.log}`] : []),
    ].join('\n'),
  },
  effects: ['exec'],
  timeoutMs: 600_000,
  execute: async (args, run) => {
    const script = resolve(run.cwd, args.path)
    const inside = relative(run.workspaceRoot, script)
    if (inside.startsWith('..') || isAbsolute(inside)) {
      throw new ReinError('OUTSIDE_WORKSPACE', `${args.path} is outside the workspace ${run.workspaceRoot}; give a path inside it`)
    }
    run.reads?.forget(script)
    // Opened before the process starts, so no output is missed. Absent outside a session.
    const log = run.spill ? await run.spill('stdout') : undefined
    const child = spawn(process.execPath, [script], { cwd: run.cwd, signal: run.signal, stdio: ['ignore', 'pipe', 'ignore'] })
    let tail = ''
    child.stdout.on('data', (chunk: Buffer) => { tail = (tail + chunk.toString()).slice(-2_000) })
    const exited = new Promise<number>((done, fail) => {
      child.once('error', fail)
      child.once('close', (code) => done(code ?? 1))
    })
    const [exitCode] = await Promise.all([exited, log && pipeline(child.stdout, log.stream)])
    return { exitCode, tail, ...(log ? { log: log.path } : {}) }
  },
})

// --- snippet: provider field ---
export interface ReadTracker {
  record(path: string): void
  forget(path: string): void
}

declare module '@rein/tools' {
  interface ToolRunFields {
    reads: ReadTracker
  }
}

export const name = 'read-tracker'
export const inject = ['tools']
export const apply = (ctx: Context) => {
  const bySession = new Map<string, Set<string>>()
  ctx.tools.contribute('reads', (call) => {
    if (!call.identity) return undefined
    const key = call.identity.conversationId
    let paths = bySession.get(key)
    if (!paths) bySession.set(key, paths = new Set())
    const seen = paths
    return { record: (path) => { seen.add(path) }, forget: (path) => { seen.delete(path) } }
  })
}

// --- snippet: test ---
it('streams the whole output to a spill file and shows the model its end', async () => {
  const workspace = await mkdtemp(join(tmpdir(), 'run-script-'))
  await writeFile(join(workspace, 'count.js'), 'for (let i = 0; i < 5000; i++) console.log(i)\n')
  const value = await runScript.execute({ path: 'count.js' }, toolContextFixture({ workspaceRoot: workspace }))
  expect(value.exitCode).toBe(0)
  expect(value.tail.endsWith('4998\n4999\n')).toBe(true)
  expect((await readFile(value.log ?? '', 'utf8')).split('\n')).toHaveLength(5001)
})

it('refuses a script outside the workspace', async () => {
  const run = toolContextFixture({ workspaceRoot: '/work/project' })
  await expect(runScript.execute({ path: '../elsewhere/x.js' }, run)).rejects.toMatchObject({ code: 'OUTSIDE_WORKSPACE' })
})

it('provider field reaches the body through the registry', async () => {
  const root = new Context()
  await root.plugin(ToolRegistry, { askFor: [] })
  await root.plugin({ name, inject, apply })
  let seen: ReadTracker | undefined
  root.tools.register(defineTool({
    name: 'probe', description: 'Probe.', parameters: {}, effects: [],
    output: { schema: { type: 'string' }, render: (_a, v) => v },
    execute: (_args, run) => { seen = run.reads; return 'ok' },
  }))
  const identity = { agent: 'main', sessionId: 's', conversationId: 's', runId: 'r', turnId: 's/1', anchor: 'm', depth: 0 }
  const result = await root.tools.execute({ callId: 'c', name: 'probe', arguments: '{}', signal: new AbortController().signal, context: { identity } })
  expect(result.isError).toBe(false)
  expect(typeof seen?.record).toBe('function')
  expect(root.tools.info('probe')).toMatchObject({ effects: [], replaySafe: true })
})
