import { mkdtemp, readFile, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import { toolContextFixture } from '../src/index.ts'

declare module '@rein/tools' {
  interface ToolRunFields {
    tracker: { seen: string[] }
  }
}

describe('toolContextFixture', () => {
  it('gives a frozen run with an identity, a workspace root and a working spill writer', async () => {
    const run = toolContextFixture({ cwd: '/work/sub', workspaceRoot: '/work', identity: { depth: 1, parentRunId: 'run_parent' } })
    expect(run).toMatchObject({ callId: 'call_test', cwd: '/work/sub', workspaceRoot: '/work', identity: { agent: 'main', depth: 1, parentRunId: 'run_parent' } })
    expect(Object.isFrozen(run)).toBe(true)
    expect(run.signal.aborted).toBe(false)
    const file = await run.spill!('stdout')
    await new Promise<void>((resolve) => file.stream.end('spilled', () => resolve()))
    expect(await readFile(file.path, 'utf8')).toBe('spilled')
    expect((await stat(file.path)).mode & 0o777).toBe(0o600)
    expect((await stat(dirname(file.path))).mode & 0o777).toBe(0o700)
    expect(run.spillFolder).toBe(dirname(file.path))
    expect(file.path.endsWith('/call_test.stdout.txt')).toBe(true)
    expect((await run.spill!('stdout')).path.endsWith('/call_test.stdout-2.txt')).toBe(true)
  })

  it('spills into the folder a test names, and shares one temporary folder otherwise', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'fixture-'))
    const named = await toolContextFixture({ spillFolder: folder }).spill!('out')
    expect(dirname(named.path)).toBe(folder)
    named.stream.end()
    expect(toolContextFixture().spillFolder).toBe(toolContextFixture().spillFolder)
  })

  it('runs a tool body with provider fields and a signal of the test\'s choosing', async () => {
    const tool = defineTool({
      name: 'note',
      description: 'Notes the call.',
      parameters: { text: { type: 'string', required: true } },
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: (args, run) => {
        run.tracker?.seen.push(args.text)
        return run.signal.aborted ? 'cancelled' : `${run.identity?.agent}: ${args.text}`
      },
    })
    const tracker = { seen: [] as string[] }
    const controller = new AbortController()
    expect(await tool.execute({ text: 'hi' }, toolContextFixture({ tracker, signal: controller.signal }))).toBe('main: hi')
    controller.abort()
    expect(await tool.execute({ text: 'late' }, toolContextFixture({ tracker, signal: controller.signal }))).toBe('cancelled')
    expect(tracker.seen).toEqual(['hi', 'late'])
  })
})
