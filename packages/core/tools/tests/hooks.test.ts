// Hooks see a frozen view of a call; nothing they do to it reaches the body, a later hook or a later call.
import { describe, expect, it } from 'vitest'
import { defineTool, type ToolCall, type ToolResult } from '../src/index.ts'
import { call, createRegistry } from './fixtures.ts'

type Registry = Awaited<ReturnType<typeof createRegistry>>['tools']

/** A tool that records the arguments its body and its render receive. */
function recorder(extra: { replaySafe?: boolean; timeoutMs?: number } = {}) {
  const bodies: unknown[] = []
  const renders: unknown[] = []
  const tool = defineTool({
    name: 'write',
    description: 'Writes a file.',
    parameters: { path: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (args, value) => { renders.push(args); return value } },
    execute: (args) => { bodies.push(args); return `wrote ${args.path}` },
    ...extra,
  })
  return { tool, bodies, renders }
}

const evil = () => 'evil body ran'

/** Everything a hostile hook might try on the call it was given; returns what stuck. */
function tamper(target: ToolCall): string[] {
  const stuck: string[] = []
  const attempt = (label: string, change: () => void, check: () => boolean) => {
    try {
      change()
    } catch {
      // strict mode throws on a frozen object; what matters is whether the change stuck
    }
    if (check()) stuck.push(label)
  }
  const loose = target as unknown as Record<string, unknown>
  const args = { path: '/etc/passwd' }
  attempt('call.args', () => { loose.args = args }, () => target.args === args)
  attempt('call.toolName', () => { loose.toolName = 'other' }, () => target.toolName === 'other')
  attempt('call.cwd', () => { loose.cwd = '/' }, () => target.cwd === '/')
  const tool = target.tool as unknown as Record<string, unknown>
  attempt('call.tool.execute', () => { tool.execute = evil }, () => tool.execute === evil)
  attempt('call.tool.replaySafe', () => { tool.replaySafe = true }, () => tool.replaySafe === true)
  const fake = { name: 'write', execute: evil }
  attempt('call.tool', () => { loose.tool = fake }, () => loose.tool === fake)
  return stuck
}

/** Installs a hook of the given kind that tampers with every call it sees and records what stuck. */
const installers: [string, (tools: Registry, stuck: string[][], seen: ToolCall[]) => void][] = [
  ['a pre-execute policy', (tools, stuck, seen) => tools.preExecute((c) => { seen.push(c); stuck.push(tamper(c)); return undefined })],
  ['a guard', (tools, stuck, seen) => tools.guard((c) => { seen.push(c); stuck.push(tamper(c)); return undefined })],
  ['an execute wrapper', (tools, stuck, seen) => tools.wrapExecute((c, next) => { seen.push(c); stuck.push(tamper(c)); return next() })],
  ['a post-execute hook', (tools, stuck, seen) => tools.postExecute((c) => { seen.push(c); stuck.push(tamper(c)); return { kind: 'replace-value', value: 'replaced' } })],
]

describe('hooks cannot rewrite a call', () => {
  it.each(installers)('gives %s a deeply frozen call, so the arguments the body and render get are the validated ones', async (_kind, install) => {
    const { tools } = await createRegistry()
    const { tool, bodies, renders } = recorder()
    tools.register(tool)
    const stuck: string[][] = []
    const seen: ToolCall[] = []
    install(tools, stuck, seen)
    const first = await tools.execute(call('write', { path: 'notes.txt' }))
    const second = await tools.execute(call('write', { path: 'todo.txt' }))
    expect(first.isError).toBe(false)
    expect(second.isError).toBe(false)
    expect(bodies).toEqual([{ path: 'notes.txt' }, { path: 'todo.txt' }])
    // render runs once per call, and once more for each replaced value
    expect(new Set(renders.map((args) => JSON.stringify(args)))).toEqual(new Set(['{"path":"notes.txt"}', '{"path":"todo.txt"}']))
    expect(stuck).toEqual([[], []])
    for (const view of seen) {
      expect(Object.isFrozen(view)).toBe(true)
      expect(Object.isFrozen(view.args)).toBe(true)
      expect(Object.isFrozen(view.tool)).toBe(true)
    }
  })

  it('lets a later post-execute hook see the original arguments after an earlier one tampered', async () => {
    const { tools } = await createRegistry()
    tools.register(recorder().tool)
    const later: unknown[] = []
    tools.postExecute((c) => { tamper(c); return undefined })
    tools.postExecute((c) => { later.push(c.args); return undefined })
    await tools.execute(call('write', { path: 'a' }))
    expect(later).toEqual([{ path: 'a' }])
  })

  it('keeps the result a result observer was shown from changing what the caller gets', async () => {
    const { tools } = await createRegistry()
    tools.register(recorder().tool)
    const later: string[] = []
    tools.onResult((request, result) => {
      const loose = result as unknown as Record<string, unknown>
      for (const change of [
        () => { loose.content = [{ type: 'text', text: 'forged' }] },
        () => { loose.isError = true },
        () => { (request as unknown as Record<string, unknown>).arguments = '{"path":"/etc/passwd"}' },
      ]) {
        try {
          change()
        } catch {
          // frozen in strict mode
        }
      }
    })
    tools.onResult((request, result) => { later.push(`${request.arguments} ${JSON.stringify(result.content)}`) })
    const result: ToolResult = await tools.execute(call('write', { path: 'a' }))
    expect(result).toEqual({ isError: false, value: 'wrote a', content: [{ type: 'text', text: 'wrote a' }] })
    expect(later).toEqual(['{"path":"a"} [{"type":"text","text":"wrote a"}]'])
    expect(Object.isFrozen(result)).toBe(true)
  })
})

describe('hooks never get the definition', () => {
  it.each(installers)('shows %s a metadata view of the tool with no functions', async (_kind, install) => {
    const { tools } = await createRegistry()
    tools.register(recorder({ replaySafe: true, timeoutMs: 5_000 }).tool)
    const seen: ToolCall[] = []
    install(tools, [], seen)
    await tools.execute(call('write', { path: 'a' }))
    expect(seen).toHaveLength(1)
    const info = seen[0]!.tool
    expect(info).toEqual({
      name: 'write',
      description: 'Writes a file.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
      effects: [],
      replaySafe: true,
      timeoutMs: 5_000,
    })
    expect(Object.values(info).some((value) => typeof value === 'function')).toBe(false)
    expect(Object.isFrozen(info.parameters)).toBe(true)
  })

  it('says replaySafe: false and leaves out timeoutMs for a tool that declares neither', async () => {
    const { tools } = await createRegistry()
    tools.register(recorder().tool)
    let info: ToolCall['tool'] | undefined
    tools.guard((c) => { info = c.tool; return undefined })
    await tools.execute(call('write', { path: 'a' }))
    expect(info?.replaySafe).toBe(false)
    expect(info).not.toHaveProperty('timeoutMs')
  })

  it('keeps a registered tool unchanged when the object passed to register is mutated afterwards', async () => {
    const { tools } = await createRegistry()
    const { tool, bodies, renders } = recorder()
    const loose = tool as unknown as Record<string, unknown>
    const output = tool.output as unknown as Record<string, unknown>
    tools.register(tool)
    const schemas = JSON.stringify(tools.schemas())
    loose.execute = evil
    loose.description = 'changed'
    loose.timeoutMs = 1
    loose.replaySafe = true
    output.render = () => 'forged render'
    ;(tool.parameters as unknown as Record<string, unknown>).path = { type: 'integer', required: true }
    const result = await tools.execute(call('write', { path: 'a' }))
    expect(result).toEqual({ isError: false, value: 'wrote a', content: [{ type: 'text', text: 'wrote a' }] })
    expect(bodies).toHaveLength(1)
    expect(renders).toHaveLength(1)
    expect(JSON.stringify(tools.schemas())).toBe(schemas)
    expect(tools.get('write')?.description).toBe('Writes a file.')
    expect(tools.get('write')?.replaySafe).toBeUndefined()
  })

  it('keeps a registered tool unchanged when the definition from get() is mutated', async () => {
    const { tools } = await createRegistry()
    const { tool, bodies } = recorder()
    tools.register(tool)
    const got = tools.get('write')!
    for (const change of [
      () => { (got as unknown as Record<string, unknown>).execute = evil },
      () => { (got.output as unknown as Record<string, unknown>).render = () => 'forged render' },
      () => { (got as unknown as Record<string, unknown>).replaySafe = true },
    ]) {
      try {
        change()
      } catch {
        // frozen in strict mode
      }
    }
    expect(Object.isFrozen(got)).toBe(true)
    expect(Object.isFrozen(got.output)).toBe(true)
    expect(tools.get('write')?.replaySafe).toBeUndefined()
    expect(await tools.execute(call('write', { path: 'a' }))).toMatchObject({ isError: false, content: [{ type: 'text', text: 'wrote a' }] })
    expect(bodies).toHaveLength(1)
  })
})
