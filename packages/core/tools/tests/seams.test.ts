import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { defineTool, type ApprovalRequest, type RunIdentity, type ToolEffect, type ToolRun } from '../src/index.ts'
import { CORE_RUN_FIELDS } from '../src/tool-run.ts'
import { call, createRegistry } from './fixtures.ts'

declare module '../src/index.ts' {
  interface ToolRunFields {
    ledger: { owner: string }
  }
}

function tool(name: string, options: { effects?: ToolEffect[]; replaySafe?: boolean; seen?: ToolRun[] } = {}) {
  return defineTool({
    name,
    description: `The ${name} tool.`,
    parameters: { path: { type: 'string' } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: (_args, run) => {
      options.seen?.push(run)
      return `${name} ran`
    },
    ...(options.effects ? { effects: options.effects } : {}),
    ...(options.replaySafe !== undefined ? { replaySafe: options.replaySafe } : {}),
  })
}

const identity: RunIdentity = Object.freeze({
  agent: 'main', sessionId: 's-1', conversationId: 's-1', runId: 'run-1', turnId: 'turn-1', anchor: 'msg-1', depth: 0,
})

describe('tool effects', () => {
  it('asks before a write or exec tool runs, never before a read or pure one', async () => {
    const { root, tools } = await createRegistry()
    const asked: ApprovalRequest[] = []
    root.provide('approval', { request: (request: ApprovalRequest) => { asked.push(request); return 'deny' as const } })
    for (const [name, effects] of [['look', ['read']], ['pure', []], ['edit', ['write']], ['shell', ['exec']], ['fetch', ['network']]] as const) {
      tools.register(tool(name, { effects: [...effects] }))
    }
    const outcomes = Object.fromEntries(await Promise.all(['look', 'pure', 'edit', 'shell', 'fetch'].map(async (name) => {
      const result = await tools.execute(call(name, {}))
      return [name, result.isError ? result.error.code : 'ran'] as const
    })))
    expect(outcomes).toEqual({ look: 'ran', pure: 'ran', edit: 'DENIED', shell: 'DENIED', fetch: 'ran' })
    expect(asked.map((request) => [request.toolName, request.effects, request.reason])).toEqual([
      ['edit', ['write'], 'it changes files'],
      ['shell', ['exec'], 'it runs commands'],
    ])
  })

  it('asks for exactly the effects in askFor', async () => {
    const { tools } = await createRegistry({ askFor: ['network'] })
    tools.register(tool('edit', { effects: ['write'] }))
    tools.register(tool('fetch', { effects: ['network', 'read'] }))
    expect((await tools.execute(call('edit', {}))).isError).toBe(false)
    const fetched = await tools.execute(call('fetch', {}))
    expect(fetched.isError && fetched.error.message).toMatch(/^fetch needs approval \(it uses the network\)/)
  })

  it('lets a policy deny a tool the effects would have asked about, without asking', async () => {
    const { root, tools } = await createRegistry()
    let asked = 0
    root.provide('approval', { request: () => { asked++; return 'allow' as const } })
    tools.register(tool('edit', { effects: ['write'] }))
    tools.preExecute(() => ({ kind: 'deny', reason: 'read-only session' }))
    const result = await tools.execute(call('edit', {}))
    expect(result.isError && result.error.message).toBe('edit was denied: read-only session')
    expect(asked).toBe(0)
  })

  it('keeps a write or exec tool from being replayed unless it says so', async () => {
    const { tools } = await createRegistry()
    tools.register(tool('look', { effects: ['read'] }))
    tools.register(tool('edit', { effects: ['write'] }))
    tools.register(tool('shell', { effects: ['exec'], replaySafe: true }))
    tools.register(tool('undeclared'))
    tools.register(tool('pure', { effects: [] }))
    expect(['look', 'edit', 'shell', 'undeclared', 'pure'].map((name) => tools.info(name)?.replaySafe)).toEqual([true, false, true, false, true])
  })

  it('refuses an unknown effect at registration', async () => {
    const { tools } = await createRegistry()
    expect(() => tools.register(tool('odd', { effects: ['delete' as ToolEffect] }))).toThrow(/effects: unknown effect "delete"; use read, write, exec, network/)
  })
})

describe('tool visibility', () => {
  it('shows and runs only the tools a caller may see; any other is UNKNOWN_TOOL naming only the visible ones', async () => {
    const { tools } = await createRegistry({ askFor: [] })
    for (const name of ['read', 'write', 'secret']) tools.register(tool(name))
    const visible = (name: string) => name !== 'secret'
    expect(tools.schemas(visible).map((schema) => schema.name)).toEqual(['read', 'write'])
    const hidden = await tools.execute(call('secret', {}, { context: { visible } }))
    expect(hidden.isError && hidden.error).toEqual({ code: 'UNKNOWN_TOOL', message: 'unknown tool "secret"; available tools: read, write' })
    expect((await tools.execute(call('read', {}, { context: { visible } }))).isError).toBe(false)
  })

  it('keeps a tool whose availableTo refuses a run (or throws) out of that run\'s list and calls, and in every other', async () => {
    const { tools } = await createRegistry({ askFor: [] })
    tools.register(tool('read'))
    tools.register({ ...tool('note'), availableTo: (run) => run.depth === 0 })
    tools.register({ ...tool('broken'), availableTo: () => { throw new Error('boom') } })
    const child: RunIdentity = Object.freeze({ ...identity, depth: 1 })
    expect(tools.schemas(undefined, identity).map((schema) => schema.name)).toEqual(['note', 'read'])
    expect(tools.schemas(undefined, child).map((schema) => schema.name)).toEqual(['read'])
    // Without an identity (not an agent's run) every tool is there.
    expect(tools.schemas().map((schema) => schema.name)).toEqual(['broken', 'note', 'read'])
    const refused = await tools.execute(call('note', {}, { context: { identity: child } }))
    expect(refused.isError && refused.error).toEqual({ code: 'UNKNOWN_TOOL', message: 'unknown tool "note"; available tools: read' })
    expect((await tools.execute(call('note', {}, { context: { identity } }))).isError).toBe(false)
    expect((await tools.execute(call('broken', {}, { context: { identity } }))).isError).toBe(true)
  })

  it('shows a run the variant its tool\'s variantFor names, and the tool as defined to every other run', async () => {
    const { tools } = await createRegistry({ askFor: [] })
    const seen: ToolRun[] = []
    const base = tool('note', { seen })
    tools.register({
      ...base,
      variants: { mine: { description: 'Notes about your own work.', parameters: { path: { type: 'string', enum: ['mine.txt'], default: 'mine.txt' } } } },
      variantFor: (run) => (run.depth > 0 ? 'mine' : undefined),
    })
    tools.register(tool('read'))
    const child: RunIdentity = Object.freeze({ ...identity, depth: 1 })
    const [shown] = tools.schemas(undefined, child)
    expect(shown).toEqual({ name: 'note', description: 'Notes about your own work.', parameters: { type: 'object', properties: { path: { type: 'string', enum: ['mine.txt'], default: 'mine.txt' } }, additionalProperties: false } })
    expect(Object.isFrozen(shown)).toBe(true)
    // The same list object while the same run is asked again: a provider caches its wire JSON by it.
    expect(tools.schemas(undefined, child)).toBe(tools.schemas(undefined, child))
    expect(tools.schemas(undefined, identity)[0]!.description).toBe('The note tool.')
    expect(tools.schemas()).toBe(tools.schemas(undefined, identity))
    // Calls are checked against the tool's own parameters: the body refuses what a run may not do.
    expect((await tools.execute(call('note', { path: 'other.txt' }, { context: { identity: child } }))).isError).toBe(false)
  })

  it('shows the tool as defined when variantFor throws, answers a promise or names no variant', async () => {
    const { tools } = await createRegistry()
    const variants = { narrow: { description: 'Narrow.' } }
    tools.register({ ...tool('a'), variants, variantFor: () => { throw new Error('boom') } })
    tools.register({ ...tool('b'), variants, variantFor: (async () => 'narrow') as never })
    tools.register({ ...tool('c'), variants, variantFor: () => 'wide' })
    expect(tools.schemas(undefined, identity).map((schema) => schema.description)).toEqual(['The a tool.', 'The b tool.', 'The c tool.'])
  })

  it('refuses variants without variantFor, variantFor without variants, and a variant that is not a description or parameters', async () => {
    const { tools } = await createRegistry()
    expect(() => tools.register({ ...tool('v1'), variants: { narrow: { description: 'Narrow.' } } })).toThrow(/^tool "v1": variants are shown only to the runs variantFor names; add variantFor: \(identity\) => a variant's name or undefined$/)
    expect(() => tools.register({ ...tool('v2'), variantFor: () => 'narrow' })).toThrow(/^tool "v2": variantFor names one of variants, but there are none; add variants: \{<name>: \{description\?, parameters\?\}\}$/)
    expect(() => tools.register({ ...tool('v3'), variants: { narrow: { descripton: 'x' } as never }, variantFor: () => 'narrow' })).toThrow(/^tool "v3": variants\.narrow: unknown key "descripton" \(did you mean "description"\?\)$/)
    expect(() => tools.register({ ...tool('v4'), variants: { narrow: { description: ' ' } }, variantFor: () => 'narrow' })).toThrow(/^tool "v4": variants\.narrow\.description must be a non-empty string/)
    expect(() => tools.register({ ...tool('v5'), variants: { narrow: { parameters: { path: { type: 'strng' } } as never } }, variantFor: () => 'narrow' })).toThrow(/^tool "v5": variants\.narrow\.parameters: /)
    expect(() => tools.register({ ...tool('v6'), variants: [] as never, variantFor: () => 'narrow' })).toThrow(/^tool "v6": variants must be an object of variants by name/)
    expect(tools.list()).toEqual([])
  })

  it('refuses an availableTo that is not a function at registration', async () => {
    const { tools } = await createRegistry()
    expect(() => tools.register({ ...tool('odd'), availableTo: true as never })).toThrow(/availableTo must be a function/)
  })
})

describe('the run a body gets', () => {
  it('is frozen and carries the identity, workspace root and spill writer', async () => {
    const { tools } = await createRegistry()
    const seen: ToolRun[] = []
    tools.register(tool('probe', { seen }))
    const spill = async (label: string) => ({ path: `/spill/${label}`, stream: new Writable({ write: (_chunk, _encoding, done) => done() }) })
    await tools.execute(call('probe', {}, { context: { sessionId: 's-1', cwd: '/work/sub', workspaceRoot: '/work', identity, spill } }))
    const run = seen[0]!
    expect(run).toMatchObject({ cwd: '/work/sub', workspaceRoot: '/work', sessionId: 's-1', identity })
    expect((await run.spill!('out')).path).toBe('/spill/out')
    expect(Object.isFrozen(run)).toBe(true)
    expect(() => { (run as { cwd: string }).cwd = '/elsewhere' }).toThrow(TypeError)
  })

  it('defaults the workspace root to cwd and leaves out what the caller did not give', async () => {
    const { tools } = await createRegistry({ cwd: '/default' })
    const seen: ToolRun[] = []
    tools.register(tool('probe', { seen }))
    await tools.execute(call('probe', {}))
    expect(seen[0]).toMatchObject({ cwd: '/default', workspaceRoot: '/default' })
    for (const key of ['identity', 'spill', 'sessionId', 'ledger']) expect(seen[0]).not.toHaveProperty(key)
  })

  it('carries fields provider packages contribute, until they are disposed', async () => {
    const { root, tools } = await createRegistry()
    const seen: ToolRun[] = []
    tools.register(tool('probe', { seen }))
    const provider = await root.plugin({
      name: 'ledger-provider',
      inject: ['tools'],
      apply: (ctx: typeof root) => {
        ctx.tools.contribute('ledger', (c) => ({ owner: c.identity?.runId ?? 'nobody' }))
      },
    })
    await tools.execute(call('probe', {}, { context: { identity } }))
    expect(seen[0]!.ledger).toEqual({ owner: 'run-1' })
    expect(() => tools.contribute('ledger', () => ({ owner: 'second' }))).toThrow(/already contributes "ledger"/)
    await provider.dispose()
    await tools.execute(call('probe', {}, { context: { identity } }))
    expect(seen[1]).not.toHaveProperty('ledger')
  })

  it.each(['workspaceRoot', 'signal', 'callId', 'cwd'])('refuses a contribution of %s, a field every run has (it would move the file tools\' boundary)', async (key) => {
    const { tools } = await createRegistry()
    const seen: ToolRun[] = []
    tools.register(tool('probe', { seen }))
    expect(() => tools.contribute(key as never, () => '/' as never)).toThrow(expect.objectContaining({ code: 'INVALID_HOOK' }))
    await tools.execute(call('probe', {}))
    expect(seen[0]![key as 'cwd']).not.toBe('/')
  })

  it('reserves every field a run has, so the list cannot drift from the run', async () => {
    const { tools } = await createRegistry()
    const seen: ToolRun[] = []
    tools.register(tool('probe', { seen }))
    const spill = async () => { throw new Error('not used') }
    await tools.execute(call('probe', {}, { context: { identity, sessionId: 's1', spill: spill as never, spillFolder: '/tmp/spill' } }))
    const fields = [...Object.keys(seen[0]!), 'signal']
    expect(fields.filter((field) => !CORE_RUN_FIELDS.has(field))).toEqual([])
  })

  it('runs the call without the field when a contributor throws', async () => {
    const { tools } = await createRegistry()
    const seen: ToolRun[] = []
    tools.register(tool('probe', { seen }))
    tools.contribute('ledger', () => { throw new Error('provider broke') })
    expect((await tools.execute(call('probe', {}))).isError).toBe(false)
    expect(seen[0]).not.toHaveProperty('ledger')
  })
})

describe('post-execute append', () => {
  it('adds model-visible text after the result, keeping the value', async () => {
    const { tools } = await createRegistry()
    tools.register(tool('look', { effects: ['read'] }))
    tools.postExecute(() => ({ kind: 'append', text: 'Note: this file changed since you read it.' }))
    const result = await tools.execute(call('look', {}))
    expect(result).toMatchObject({ isError: false, value: 'look ran', content: [{ type: 'text', text: 'look ran' }, { type: 'text', text: 'Note: this file changed since you read it.' }] })
  })

  it('blocks when a hook appends something other than text', async () => {
    const { tools } = await createRegistry()
    tools.register(tool('look', { effects: ['read'] }))
    tools.postExecute(() => ({ kind: 'append', text: 42 as unknown as string }))
    const result = await tools.execute(call('look', {}))
    expect(result.isError && result.error.code).toBe('BLOCKED')
  })
})

describe('recover', () => {
  function recoverable(recover: (callId: string) => unknown) {
    return defineTool({
      name: 'delegate',
      description: 'Runs a subagent.',
      parameters: { task: { type: 'string', required: true } },
      output: { schema: { type: 'string' }, render: (args, value) => `${args.task}: ${value}` },
      execute: () => 'done',
      recover: (c) => recover(c.callId) as { value: string } | undefined,
    })
  }
  const input = { callId: 'call-7', name: 'delegate', arguments: '{"task":"count"}', signal: new AbortController().signal }

  it('gives back the real result, rendered, when the tool finds it', async () => {
    const { tools } = await createRegistry()
    tools.register(recoverable((callId) => ({ value: `found ${callId}` })))
    expect(await tools.recover(input)).toMatchObject({ isError: false, value: 'found call-7', content: [{ type: 'text', text: 'count: found call-7' }] })
  })

  it('declines when the tool declines, throws, is gone, or has no recover', async () => {
    const { tools } = await createRegistry()
    let answer: () => unknown = () => undefined
    tools.register(recoverable(() => answer()))
    expect(await tools.recover(input)).toBeUndefined()
    answer = () => { throw new Error('child log unreadable') }
    expect(await tools.recover(input)).toBeUndefined()
    expect(await tools.recover({ ...input, name: 'gone' })).toBeUndefined()
    tools.register(tool('plain'))
    expect(await tools.recover({ ...input, name: 'plain', arguments: '{}' })).toBeUndefined()
  })

  it('gives up on a recover that never settles once the tool\'s deadline passes', async () => {
    const { tools } = await createRegistry()
    tools.register({ ...recoverable(() => new Promise(() => {})), timeoutMs: 20 })
    expect(await tools.recover(input)).toBeUndefined()
  })

  it('fails a recovered value that does not match the output schema', async () => {
    const { tools } = await createRegistry()
    tools.register(recoverable(() => ({ value: 7 })))
    const result = await tools.recover(input)
    expect(result?.isError && result.error.code).toBe('INVALID_TOOL_OUTPUT')
  })
})
