import { ReinError } from '@rein/base'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { defineTool, type ApprovalRequest, type ToolCall, type ToolRun } from '../src/index.ts'
import { call, createRegistry, echo } from './fixtures.ts'

type Tools = Awaited<ReturnType<typeof createRegistry>>['tools']

afterEach(() => {
  vi.useRealTimers()
})

/** A tool whose body records each run and can be told how to behave. */
function probe(behaviour: (run: ToolRun) => unknown = () => ({ ok: true }), extra: { timeoutMs?: number; cancelGraceMs?: number } = {}) {
  const runs: { args: unknown; run: ToolRun }[] = []
  const tool = defineTool({
    name: 'probe',
    description: 'Records its runs.',
    parameters: { path: { type: 'string', required: true } },
    output: { schema: { type: 'json' }, render: (_args, value) => JSON.stringify(value) },
    execute: (args, run) => {
      runs.push({ args, run })
      return behaviour(run) as never
    },
    ...extra,
  })
  return { tool, runs }
}

const never = (signal?: AbortSignal) => new Promise<never>((_, reject) => {
  signal?.addEventListener('abort', () => reject(signal.reason as Error))
})

describe('execute: success', () => {
  it('returns the frozen value, rendered content and presentation meta', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    const result = await tools.execute(call('echo', { text: 'ab', times: 2 }))
    expect(result).toEqual({ isError: false, value: { text: 'abab' }, content: [{ type: 'text', text: 'abab' }], meta: { times: 2 } })
    expect(result.isError === false && Object.isFrozen(result.value)).toBe(true)
  })

  it('gives the body frozen arguments and the run context', async () => {
    const { tools } = await createRegistry({ cwd: '/default' })
    const { tool, runs } = probe()
    tools.register(tool)
    const controller = new AbortController()
    await tools.execute(call('probe', { path: 'a.txt' }, { callId: 'c-7', signal: controller.signal, context: { sessionId: 's-1', cwd: '/work' } }))
    await tools.execute(call('probe', { path: 'b.txt' }))
    expect(runs[0]!.args).toEqual({ path: 'a.txt' })
    expect(Object.isFrozen(runs[0]!.args)).toBe(true)
    expect(runs[0]!.run).toMatchObject({ callId: 'c-7', sessionId: 's-1', cwd: '/work' })
    expect(runs[0]!.run.signal.aborted).toBe(false)
    expect(typeof runs[0]!.run.logger.info).toBe('function')
    expect(runs[1]!.run.cwd).toBe('/default')
    expect(runs[1]!.run).not.toHaveProperty('sessionId')
  })

  it('treats an empty argument string as an empty object', async () => {
    const { tools } = await createRegistry()
    tools.register(defineTool({
      name: 'now', description: 'No parameters.', parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: () => 'tick',
    }))
    expect(await tools.execute(call('now', ''))).toMatchObject({ isError: false, value: 'tick' })
    expect(await tools.execute(call('now', '  '))).toMatchObject({ isError: false, value: 'tick' })
  })
})

describe('execute: bad input never reaches the body', () => {
  it('names an unknown tool and lists the ones there are', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    expect(await tools.execute(call('ehco', { text: 'x' }))).toEqual({
      isError: true,
      error: { code: 'UNKNOWN_TOOL', message: 'unknown tool "ehco"; available tools: echo' },
      content: [{ type: 'text', text: 'Error: unknown tool "ehco"; available tools: echo' }],
    })
  })

  it.each([
    ['malformed JSON', '{"path": "a"', /^invalid arguments for probe: arguments are not valid JSON \(/],
    ['a wrong type', '{"path": 42}', /^invalid arguments for probe: \$\.path: expected a string but got number 42$/],
    ['a missing required field', '{}', /^invalid arguments for probe: \$\.path: missing required property$/],
    ['an extra field on the closed root', '{"path": "a", "force": true}', /^invalid arguments for probe: \$\.force: unknown property \(allowed: path\)$/],
    ['an array instead of an object', '["a"]', /^invalid arguments for probe: \$: expected an object but got an array$/],
    ['a bare string', '"a.txt"', /^invalid arguments for probe: \$: expected an object but got "a\.txt"$/],
    ['null', 'null', /^invalid arguments for probe: \$: expected an object but got null$/],
  ])('rejects %s with INVALID_ARGS', async (_label, raw, message) => {
    const { tools } = await createRegistry()
    const { tool, runs } = probe()
    tools.register(tool)
    const result = await tools.execute(call('probe', raw))
    expect(result.isError && result.error.code).toBe('INVALID_ARGS')
    expect(result.isError && result.error.message).toMatch(message)
    expect(result.content[0]).toEqual({ type: 'text', text: `Error: ${result.isError && result.error.message}` })
    expect(runs).toHaveLength(0)
  })

  it('lists every bad path at once', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    const result = await tools.execute(call('echo', { times: 9, extra: 1 }))
    expect(result.isError && result.error.message).toBe(
      'invalid arguments for echo: $.text: missing required property; $.times: must be <= 3; $.extra: unknown property (allowed: text, times)',
    )
  })

  it('refuses arguments over the byte limit before parsing them', async () => {
    const { tools } = await createRegistry({ maxArgumentBytes: 64 })
    const { tool, runs } = probe()
    tools.register(tool)
    const result = await tools.execute(call('probe', { path: 'é'.repeat(40) }))
    expect(result.isError && result.error).toEqual({ code: 'INVALID_ARGS', message: 'invalid arguments for probe: arguments are 91 bytes; the limit is 64' })
    expect(runs).toHaveLength(0)
  })

  it('refuses arguments nested past the depth limit without overflowing the stack', async () => {
    const { tools } = await createRegistry()
    tools.register(defineTool({
      name: 'store', description: 'Stores any JSON.', parameters: { value: { type: 'json', required: true } },
      output: { schema: { type: 'null' }, render: () => 'stored' },
      execute: () => null,
    }))
    const deep = `{"value":${'['.repeat(200_000)}${']'.repeat(200_000)}}`
    const result = await tools.execute(call('store', deep))
    expect(result.isError && result.error).toEqual({ code: 'INVALID_ARGS', message: 'invalid arguments for store: arguments nest deeper than 64 levels' })
    expect(await tools.execute(call('store', { value: [[[{ a: [1] }]]] }))).toMatchObject({ isError: false })
  })
})

describe('execute: whatever a tool package throws', () => {
  const nullPrototype = () => Object.create(null) as object
  const badMessage = () => {
    const error = new Error('x')
    Object.defineProperty(error, 'message', { get() { throw new Error('getter') } })
    return error
  }
  it.each([
    ['null', () => null],
    ['undefined', () => undefined],
    ['an object with no prototype', nullPrototype],
    ['an Error whose message getter throws', badMessage],
  ])('gives the model a typed failure, never a rejection, when the body throws %s', async (_case, make) => {
    const { tools } = await createRegistry()
    tools.register(probe(() => { throw make() }).tool)
    const result = await tools.execute(call('probe', { path: 'a' }))
    expect(result).toMatchObject({ isError: true, error: { code: 'TOOL_FAILED', message: expect.stringContaining('probe failed without saying why') } })
  })

  it.each([
    ['a policy', (tools: Tools) => tools.preExecute(() => { throw Object.create(null) })],
    ['a guard', (tools: Tools) => tools.guard(() => { throw null })],
    ['a wrapper', (tools: Tools) => tools.wrapExecute(() => { throw Object.create(null) })],
    ['a post-execute hook', (tools: Tools) => tools.postExecute(() => { throw null })],
  ])('gives a typed failure when %s throws something with no message', async (_case, install) => {
    const { tools } = await createRegistry()
    tools.register(probe().tool)
    install(tools)
    const result = await tools.execute(call('probe', { path: 'a' }))
    expect(result.isError && typeof result.error.code === 'string' && result.error.message.length > 0).toBe(true)
    expect(result.isError && result.error.message).not.toMatch(/undefined|null\)/)
  })

  it('refuses an image result that holds its bytes (a data: url): it would pass every output cap', async () => {
    const { tools } = await createRegistry()
    tools.register(defineTool({
      name: 'shot', description: 'Takes a screenshot.', parameters: {},
      output: { schema: { type: 'json' }, render: () => [{ type: 'image', mediaType: 'image/png', url: `data:image/png;base64,${'A'.repeat(3_000_000)}` }] },
      execute: () => 1,
    }))
    expect(await tools.execute(call('shot', {}))).toMatchObject({ isError: true, error: { code: 'TOOL_FAILED', message: expect.stringContaining('not hold it (data:)') } })
  })

  it('gives a typed failure when render throws null', async () => {
    const { tools } = await createRegistry()
    tools.register(defineTool({
      name: 'shown', description: 'Renders badly.', parameters: {},
      output: { schema: { type: 'json' }, render: () => { throw null } },
      execute: () => 1,
    }))
    expect(await tools.execute(call('shown', {}))).toMatchObject({ isError: true, error: { code: 'TOOL_FAILED' } })
  })
})

describe('execute: pre-execute policies, approval and guards', () => {
  const deny = () => ({ kind: 'deny' as const, reason: 'outside the workspace' })
  const ask = () => ({ kind: 'ask' as const, reason: 'writes a file' })
  const allow = () => ({ kind: 'allow' as const })

  it.each([
    ['deny, ask, allow', [deny, ask, allow]],
    ['allow, ask, deny', [allow, ask, deny]],
    ['ask, deny', [ask, deny]],
  ])('lets deny win over ask and allow in any order (%s)', async (_order, policies) => {
    const { root, tools } = await createRegistry()
    const { tool, runs } = probe()
    tools.register(tool)
    const asked: ApprovalRequest[] = []
    root.provide('approval', { request: (request: ApprovalRequest) => { asked.push(request); return 'allow' as const } })
    for (const policy of policies) tools.preExecute(policy)
    const result = await tools.execute(call('probe', { path: 'a' }))
    expect(result.isError && result.error).toEqual({ code: 'DENIED', message: 'probe was denied: outside the workspace' })
    expect(runs).toHaveLength(0)
    expect(asked).toHaveLength(0)
  })

  it('asks the approval service when any policy asks, and runs on allow', async () => {
    const { root, tools } = await createRegistry()
    const { tool, runs } = probe()
    tools.register(tool)
    const asked: ApprovalRequest[] = []
    root.provide('approval', { request: async (request: ApprovalRequest) => { asked.push(request); return 'allow' as const } })
    tools.preExecute(allow)
    tools.preExecute(ask)
    const result = await tools.execute(call('probe', { path: 'a' }, { callId: 'c-9' }))
    expect(result.isError).toBe(false)
    expect(runs).toHaveLength(1)
    expect(asked).toMatchObject([{ callId: 'c-9', toolName: 'probe', args: { path: 'a' }, reason: 'writes a file', policy: 'writes a file' }])
    expect(asked[0]!.signal).toBeInstanceOf(AbortSignal)
  })

  it('asks an approval service given to execute itself, as well as one given by a getter, and never rejects for either', async () => {
    const { tools } = await createRegistry()
    const { tool, runs } = probe()
    tools.register(tool)
    tools.preExecute(ask)
    const asked: string[] = []
    const service = { request: (request: ApprovalRequest) => { asked.push(request.callId); return 'allow' as const } }
    // A JavaScript caller may pass the service, as "approval names the service" reads.
    const given = await tools.execute({ ...call('probe', { path: 'a' }, { callId: 'c-1' }), approval: service as never })
    const gotten = await tools.execute({ ...call('probe', { path: 'a' }, { callId: 'c-2' }), approval: () => service })
    expect([given.isError, gotten.isError, asked, runs.length]).toEqual([false, false, ['c-1', 'c-2'], 2])
  })

  it('does not blame askFor when a policy asked and no approval service is installed, and keeps the effects\' wording', async () => {
    const { tools } = await createRegistry({ askFor: ['write'] })
    const { tool } = probe()
    tools.register(tool)
    tools.register(defineTool({
      name: 'save', description: 'Saves.', parameters: { path: { type: 'string', required: true } }, effects: ['write'],
      output: { schema: { type: 'json' }, render: () => 'saved' }, execute: () => ({ ok: true }),
    }))
    const effectsOnly = await tools.execute(call('save', { path: 'a' }))
    expect(effectsOnly.isError && effectsOnly.error).toEqual({ code: 'DENIED', message: 'save needs approval (it changes files) and no approval service is installed: load one, or remove the effect from askFor on the @rein/tools row to run such calls without asking' })
    tools.preExecute(ask)
    const policyOnly = await tools.execute(call('probe', { path: 'a' }))
    expect(policyOnly.isError && policyOnly.error).toEqual({ code: 'DENIED', message: 'probe needs approval (writes a file): a policy for this tool asked (askFor did not), and no approval service is installed: load one, or change the setting of the plugin whose policy asks to run such calls without asking' })
    const both = await tools.execute(call('save', { path: 'a' }))
    expect(both.isError && both.error).toEqual({ code: 'DENIED', message: 'save needs approval (it changes files; writes a file) and no approval service is installed: load one; to run such calls without asking, remove the effect from askFor on the @rein/tools row and change the setting of the plugin whose policy asks (writes a file)' })
  })

  it('denies when the approval service says no, fails, or is not installed', async () => {
    const { root, tools } = await createRegistry()
    const { tool, runs } = probe()
    tools.register(tool)
    tools.preExecute(ask)
    expect((await tools.execute(call('probe', { path: 'a' }))).isError && 'DENIED').toBe('DENIED')
    const noApproval = await tools.execute(call('probe', { path: 'a' }))
    expect(noApproval.isError && noApproval.error.message).toBe('probe needs approval (writes a file): a policy for this tool asked (askFor did not), and no approval service is installed: load one, or change the setting of the plugin whose policy asks to run such calls without asking')

    let answer: () => 'allow' | 'deny' = () => 'deny'
    root.provide('approval', { request: () => answer() })
    const refused = await tools.execute(call('probe', { path: 'a' }))
    expect(refused.isError && refused.error).toEqual({ code: 'DENIED', message: 'probe was not approved (writes a file)' })
    answer = () => { throw new Error('terminal closed') }
    expect((await tools.execute(call('probe', { path: 'a' }))).isError).toBe(true)
    expect(runs).toHaveLength(0)
  })

  it('counts a throwing policy or guard as a denial', async () => {
    const { tools } = await createRegistry()
    const { tool, runs } = probe()
    tools.register(tool)
    const dispose = tools.preExecute(() => { throw new Error('policy bug') })
    const byPolicy = await tools.execute(call('probe', { path: 'a' }))
    expect(byPolicy.isError && byPolicy.error).toEqual({ code: 'DENIED', message: 'probe was denied: a pre-execute policy failed (policy bug)' })
    await dispose()
    tools.guard(async () => { throw new Error('guard bug') })
    const byGuard = await tools.execute(call('probe', { path: 'a' }))
    expect(byGuard.isError && byGuard.error).toEqual({ code: 'DENIED', message: 'probe was denied: a guard failed (guard bug)' })
    expect(runs).toHaveLength(0)
  })

  it('a denial that names a code fails the call as the tool would (that code, the reason as message), before anyone is asked; one without keeps DENIED', async () => {
    const { root, tools } = await createRegistry({ askFor: ['write'] })
    const { tool, runs } = probe()
    tools.register(tool)
    const asked: string[] = []
    root.provide('approval', { request: (request: ApprovalRequest) => { asked.push(request.toolName); return 'allow' as const } })
    const dispose = tools.preExecute(() => ({ kind: 'deny', reason: 'the store is damaged', code: 'STORE_CORRUPT' }))
    const coded = await tools.execute(call('probe', { path: 'a' }))
    expect(coded.isError && coded.error).toEqual({ code: 'STORE_CORRUPT', message: 'the store is damaged' })
    await dispose()
    // A code that is not one (empty, not a string) is not passed on: the call is DENIED as before.
    tools.preExecute(() => ({ kind: 'deny', reason: 'no', code: '' }))
    const uncoded = await tools.execute(call('probe', { path: 'a' }))
    expect(uncoded.isError && uncoded.error).toEqual({ code: 'DENIED', message: 'probe was denied: no' })
    expect(asked).toEqual([])
    expect(runs).toHaveLength(0)
  })

  it('fails the call with a coded denial over a plain one, whichever policy was registered first', async () => {
    const { tools } = await createRegistry()
    const { tool } = probe()
    tools.register(tool)
    const plain = () => ({ kind: 'deny' as const, reason: 'needs approval, and nobody is asked' })
    const coded = () => ({ kind: 'deny' as const, reason: 'the store is damaged', code: 'STORE_CORRUPT' })
    for (const order of [[plain, coded], [coded, plain]]) {
      const disposers = order.map((policy) => tools.preExecute(policy))
      const result = await tools.execute(call('probe', { path: 'a' }))
      expect(result.isError && result.error).toEqual({ code: 'STORE_CORRUPT', message: 'the store is damaged' })
      for (const dispose of disposers) await dispose()
    }
  })

  it('a denial naming a code that says the call did something else (ran, was cancelled, timed out, is unknown, was never started by a crash) is DENIED: logs, ledgers and spans read those codes as what happened', async () => {
    const { tools } = await createRegistry()
    const { tool, runs } = probe()
    tools.register(tool)
    let code = ''
    tools.preExecute(() => ({ kind: 'deny', reason: 'not now', code }))
    for (code of ['ABORTED', 'ABORTED_BEFORE_DISPATCH', 'UNKNOWN_TOOL', 'TOOL_TIMEOUT', 'TOOL_FAILED', 'INVALID_TOOL_OUTPUT', 'BLOCKED', 'TOOL_NOT_STARTED', 'TOOL_OUTCOME_UNKNOWN', 'BUDGET_EXCEEDED']) {
      const result = await tools.execute(call('probe', { path: 'a' }))
      expect({ code, error: result.isError && result.error }).toEqual({ code, error: { code: 'DENIED', message: 'probe was denied: not now' } })
    }
    // A refusal of arguments, or a tool's own code, is kept.
    for (code of ['INVALID_ARGS', 'MEMORY_NOT_FOUND']) {
      const result = await tools.execute(call('probe', { path: 'a' }))
      expect(result.isError && result.error).toEqual({ code, message: 'not now' })
    }
    expect(runs).toHaveLength(0)
  })

  it('runs guards after policies allow, and any guard can deny', async () => {
    const { tools } = await createRegistry()
    const { tool, runs } = probe()
    tools.register(tool)
    const seen: string[] = []
    tools.preExecute(() => { seen.push('policy'); return allow() })
    tools.guard(() => { seen.push('guard 1'); return undefined })
    tools.guard((call) => { seen.push('guard 2'); return call.args.path === '/etc/passwd' ? 'protected path' : undefined })
    expect((await tools.execute(call('probe', { path: 'ok' }))).isError).toBe(false)
    const denied = await tools.execute(call('probe', { path: '/etc/passwd' }))
    expect(denied.isError && denied.error.message).toBe('probe was denied: protected path')
    expect(seen).toEqual(['policy', 'guard 1', 'guard 2', 'policy', 'guard 1', 'guard 2'])
    expect(runs.map((run) => run.args)).toEqual([{ path: 'ok' }])
  })

  it('never lets a policy rewrite the arguments', async () => {
    const { tools } = await createRegistry()
    const { tool, runs } = probe()
    tools.register(tool)
    const frozen: boolean[] = []
    tools.preExecute((call: ToolCall) => {
      frozen.push(Object.isFrozen(call.args))
      try {
        ;(call.args as Record<string, unknown>).path = '/elsewhere'
      } catch {
        // strict mode throws on a frozen object; the point is that nothing changes
      }
      return undefined
    })
    await tools.execute(call('probe', { path: 'mine' }))
    expect(frozen).toEqual([true])
    expect(runs[0]!.args).toEqual({ path: 'mine' })
  })
})

describe('execute: wrappers, deadlines and cancellation', () => {
  it('runs wrappers outermost-first around the body', async () => {
    const { tools } = await createRegistry()
    const order: string[] = []
    const { tool } = probe(() => { order.push('body'); return 1 })
    tools.register(tool)
    tools.wrapExecute(async (_call, next) => { order.push('outer in'); const outcome = await next(); order.push(`outer out ${outcome.ok}`); return outcome })
    tools.wrapExecute(async (_call, next) => { order.push('inner in'); const outcome = await next(); order.push('inner out'); return outcome })
    await tools.execute(call('probe', { path: 'a' }))
    expect(order).toEqual(['outer in', 'inner in', 'body', 'inner out', 'outer out true'])
  })

  it('lets a wrapper swap the signal while the caller can still cancel', async () => {
    const { tools } = await createRegistry()
    let bodySignal: AbortSignal | undefined
    const { tool } = probe((run) => { bodySignal = run.signal; return never(run.signal) })
    tools.register(tool)
    const own = new AbortController()
    tools.wrapExecute((_call, next) => next(own.signal))
    const caller = new AbortController()
    const pending = tools.execute(call('probe', { path: 'a' }, { signal: caller.signal }))
    await vi.waitFor(() => expect(bodySignal).toBeDefined())
    expect(bodySignal).not.toBe(own.signal)
    caller.abort()
    const result = await pending
    expect(bodySignal!.aborted).toBe(true)
    expect(result.isError && result.error.code).toBe('ABORTED')
  })

  it('fails the call when a wrapper calls next twice or fabricates a result', async () => {
    const { tools } = await createRegistry()
    const { tool, runs } = probe()
    tools.register(tool)
    const twice = tools.wrapExecute(async (_call, next) => { await next(); return next() })
    const doubled = await tools.execute(call('probe', { path: 'a' }))
    expect(doubled.isError && doubled.error).toEqual({ code: 'WRAPPER_MISUSE', message: 'an execute wrapper called next() twice' })
    expect(runs).toHaveLength(1)
    await twice()
    tools.wrapExecute(async () => ({ ok: true, value: { forged: true } }))
    const forged = await tools.execute(call('probe', { path: 'a' }))
    expect(forged.isError && forged.error.code).toBe('WRAPPER_MISUSE')
    expect(runs).toHaveLength(1)
  })

  it('fails the call, and nothing escapes, when a wrapper calls next twice without awaiting the second', async () => {
    const escaped: unknown[] = []
    const onUnhandled = (reason: unknown) => { escaped.push(reason) }
    process.on('unhandledRejection', onUnhandled)
    try {
      const { tools } = await createRegistry()
      tools.register(probe().tool)
      tools.wrapExecute(async (_call, next) => {
        const result = await next()
        void next()
        return result
      })
      const result = await tools.execute(call('probe', { path: 'a' }))
      await new Promise((resolve) => setTimeout(resolve, 10))
      expect(result.isError && result.error.code).toBe('WRAPPER_MISUSE')
      expect(escaped).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })

  it('says ABORTED, naming the wrapper, when a signal a wrapper swapped in stops the body', async () => {
    const { tools } = await createRegistry()
    tools.register(probe((run) => never(run.signal)).tool)
    tools.wrapExecute((_call, next) => next(AbortSignal.timeout(20)))
    const result = await tools.execute(call('probe', { path: 'a' }))
    expect(result.isError && result.error).toMatchObject({ code: 'ABORTED', message: expect.stringContaining('stopped by an execute wrapper') })
  })

  it('keeps the code of a ReinError a wrapper throws', async () => {
    const { tools } = await createRegistry()
    const { tool } = probe()
    tools.register(tool)
    tools.wrapExecute(async () => { throw new ReinError('RATE_LIMITED', 'too many calls this minute') })
    expect((await tools.execute(call('probe', { path: 'a' }))).content).toEqual([{ type: 'text', text: 'Error: too many calls this minute' }])
  })

  it('ends a call past its timeoutMs with TOOL_TIMEOUT, even if the body ignores its signal', async () => {
    vi.useFakeTimers()
    const { tools } = await createRegistry()
    let signal: AbortSignal | undefined
    const { tool } = probe((run) => { signal = run.signal; return never() }, { timeoutMs: 5_000 })
    tools.register(tool)
    const measured: boolean[] = []
    tools.wrapExecute(async (_call, next) => { const outcome = await next(); measured.push(outcome.ok); return outcome })
    const pending = tools.execute(call('probe', { path: 'a' }))
    await vi.advanceTimersByTimeAsync(5_000)
    const result = await pending
    expect(result.isError && result.error).toEqual({ code: 'TOOL_TIMEOUT', message: 'probe did not finish within 5000 ms' })
    expect(signal!.aborted).toBe(true)
    expect(measured).toEqual([false])
  })

  it('does not time out a body that finishes in time', async () => {
    vi.useFakeTimers()
    const { tools } = await createRegistry()
    const { tool } = probe(() => new Promise((resolve) => setTimeout(() => resolve('done'), 4_999)), { timeoutMs: 5_000 })
    tools.register(tool)
    const pending = tools.execute(call('probe', { path: 'a' }))
    await vi.advanceTimersByTimeAsync(4_999)
    expect(await pending).toMatchObject({ isError: false, value: 'done' })
  })

  it('ends a hung call after the default timeout when the tool declares no timeoutMs', async () => {
    vi.useFakeTimers()
    const { tools } = await createRegistry()
    let signal: AbortSignal | undefined
    const { tool } = probe((run) => { signal = run.signal; return never() })
    tools.register(tool)
    let settled = false
    const pending = tools.execute(call('probe', { path: 'a' })).finally(() => { settled = true })
    await vi.advanceTimersByTimeAsync(119_999)
    expect(settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect((await pending).isError && (await pending)).toMatchObject({ error: { code: 'TOOL_TIMEOUT', message: 'probe did not finish within 120000 ms' } })
    expect(signal!.aborted).toBe(true)
  })

  it('takes the default timeout from Config, and a tool keeps its own timeoutMs over it', async () => {
    vi.useFakeTimers()
    const { tools } = await createRegistry({ defaultTimeoutMs: 1_000 })
    const { tool } = probe(() => never())
    tools.register(tool)
    tools.register({ ...probe(() => never(), { timeoutMs: 3_000 }).tool, name: 'patient' })
    const hung = tools.execute(call('probe', { path: 'a' }))
    const patient = tools.execute(call('patient', { path: 'a' }))
    let patientSettled = false
    void patient.finally(() => { patientSettled = true })
    await vi.advanceTimersByTimeAsync(1_000)
    expect(await hung).toMatchObject({ error: { code: 'TOOL_TIMEOUT', message: 'probe did not finish within 1000 ms' } })
    await vi.advanceTimersByTimeAsync(1_999)
    expect(patientSettled).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(await patient).toMatchObject({ error: { code: 'TOOL_TIMEOUT', message: 'patient did not finish within 3000 ms' } })
  })

  it('does not start a call whose signal is already aborted', async () => {
    const { tools } = await createRegistry()
    const { tool, runs } = probe()
    tools.register(tool)
    const controller = new AbortController()
    controller.abort()
    const result = await tools.execute(call('probe', { path: 'a' }, { signal: controller.signal }))
    expect(result.isError && result.error).toEqual({ code: 'ABORTED_BEFORE_DISPATCH', message: 'probe was cancelled before it started' })
    expect(runs).toHaveLength(0)
  })

  it('does not start a call cancelled while waiting for approval', async () => {
    const { root, tools } = await createRegistry()
    const { tool, runs } = probe()
    tools.register(tool)
    const controller = new AbortController()
    tools.preExecute(() => ({ kind: 'ask', reason: 'check' }))
    root.provide('approval', { request: () => { controller.abort(); return 'allow' as const } })
    const result = await tools.execute(call('probe', { path: 'a' }, { signal: controller.signal }))
    expect(result.isError && result.error.code).toBe('ABORTED_BEFORE_DISPATCH')
    expect(runs).toHaveLength(0)
  })

  /** Hooks that, once the caller cancels, never settle: each holds its call unless raced with the signal. */
  const hangers: [string, string, (tools: Tools, root: Awaited<ReturnType<typeof createRegistry>>['root'], cancel: () => void) => void][] = [
    ['a pre-execute policy', 'ABORTED_BEFORE_DISPATCH', (tools, _root, cancel) => tools.preExecute(() => { cancel(); return new Promise<never>(() => {}) })],
    ['a guard', 'ABORTED_BEFORE_DISPATCH', (tools, _root, cancel) => tools.guard(() => { cancel(); return new Promise<never>(() => {}) })],
    ['an approval service that ignores its signal', 'ABORTED_BEFORE_DISPATCH', (tools, root, cancel) => {
      tools.preExecute(() => ({ kind: 'ask', reason: 'check' }))
      root.provide('approval', { request: () => { cancel(); return new Promise<never>(() => {}) } })
    }],
    ['an execute wrapper that never calls next', 'ABORTED', (tools, _root, cancel) => tools.wrapExecute(() => { cancel(); return new Promise<never>(() => {}) })],
    ['an execute wrapper that hangs after next', 'ABORTED', (tools, _root, cancel) => tools.wrapExecute(async (_call, next) => { await next(); cancel(); return new Promise<never>(() => {}) })],
    ['a post-execute hook', 'ABORTED', (tools, _root, cancel) => tools.postExecute(() => { cancel(); return new Promise<never>(() => {}) })],
  ]

  it.each(hangers)('ends a cancelled call held forever by %s', async (_kind, code, install) => {
    const { root, tools } = await createRegistry()
    const { tool } = probe()
    tools.register(tool)
    const controller = new AbortController()
    install(tools, root, () => controller.abort())
    const result = await tools.execute(call('probe', { path: 'a' }, { signal: controller.signal }))
    expect(result.isError && result.error.code).toBe(code)
  })

  it('stops a call still running when its tool is removed, and tells the body through its signal', async () => {
    const { tools } = await createRegistry()
    const { tool, runs } = probe((run) => never(run.signal))
    const remove = tools.register(tool)
    const pending = tools.execute(call('probe', { path: 'a' }))
    await vi.waitFor(() => expect(runs).toHaveLength(1))
    await remove()
    const result = await pending
    expect(result.isError && result.error).toEqual({ code: 'ABORTED', message: 'probe was stopped: its tool was removed while it ran (its plugin was disposed); its effects may be partial' })
    expect(runs[0]!.run.signal.aborted).toBe(true)
  })

  it('reports ABORTED when cancelled mid-run, without waiting for a body that ignores the signal', async () => {
    const { tools } = await createRegistry()
    const { tool, runs } = probe(() => never())
    tools.register(tool)
    const controller = new AbortController()
    const pending = tools.execute(call('probe', { path: 'a' }, { signal: controller.signal }))
    await vi.waitFor(() => expect(runs).toHaveLength(1))
    controller.abort()
    expect(await pending).toMatchObject({ error: { code: 'ABORTED' } })
    expect(runs[0]!.run.signal.aborted).toBe(true)
  })

  it('keeps a success that finished before the caller cancelled', async () => {
    const { tools } = await createRegistry()
    const controller = new AbortController()
    const { tool } = probe(() => 'written')
    tools.register(tool)
    tools.wrapExecute(async (_call, next) => { const outcome = await next(); controller.abort(); return outcome })
    expect(await tools.execute(call('probe', { path: 'a' }, { signal: controller.signal }))).toMatchObject({ isError: false, value: 'written' })
  })
})

describe('execute: a cancel grace (cancelGraceMs)', () => {
  /** Runs `behaviour` as the body of a registered probe and cancels the call once the body started. */
  async function cancelled(behaviour: (run: ToolRun) => unknown, cancelGraceMs?: number, wrap?: (tools: Tools) => void) {
    const { tools } = await createRegistry()
    wrap?.(tools)
    let started!: () => void
    const running = new Promise<void>((resolve) => { started = resolve })
    tools.register(probe((run) => { started(); return behaviour(run) }, cancelGraceMs === undefined ? {} : { cancelGraceMs }).tool)
    const controller = new AbortController()
    const result = tools.execute(call('probe', { path: 'a' }, { signal: controller.signal }))
    await running
    controller.abort(new Error('stop'))
    return result
  }
  /** A body that answers its cancel with its own error, after a tick. */
  const partial = (run: ToolRun) => new Promise((_, reject) => {
    run.signal.addEventListener('abort', () => setTimeout(() => reject(new ReinError('PARTIAL', 'had done half')), 1))
  })

  it('lets a cancelled body end with its own error, which says what it had done', async () => {
    const result = await cancelled(partial, 5_000)
    expect(result.isError && result.error).toEqual({ code: 'PARTIAL', message: 'had done half' })
  })

  it('lets the body answer within its grace under an execute wrapper too (telemetry wraps every call)', async () => {
    const result = await cancelled(partial, 5_000, (tools) => tools.wrapExecute((_call, next) => next()))
    expect(result.isError && result.error).toEqual({ code: 'PARTIAL', message: 'had done half' })
  })

  it('does not start a body whose tool was removed while a hook was deciding', async () => {
    const { root, tools } = await createRegistry()
    const { tool, runs } = probe()
    const remove = tools.register(tool)
    tools.preExecute(() => ({ kind: 'ask', reason: 'check' }))
    root.provide('approval', { request: async () => { await remove(); return 'allow' as const } })
    const result = await tools.execute(call('probe', { path: 'a' }))
    expect(result.isError && result.error.code).toBe('ABORTED_BEFORE_DISPATCH')
    expect(runs).toHaveLength(0)
  })

  it('ends ABORTED at once without a grace, and after it when the body never answers', async () => {
    expect(await cancelled(partial)).toMatchObject({ isError: true, error: { code: 'ABORTED' } })
    expect(await cancelled(() => new Promise(() => {}), 5)).toMatchObject({ isError: true, error: { code: 'ABORTED' } })
  })

  it('refuses a grace that is not a whole number of ms up to 10000', async () => {
    const { tools } = await createRegistry()
    for (const cancelGraceMs of [-1, 1.5, 10_001]) {
      expect(() => tools.register(probe(undefined, { cancelGraceMs }).tool)).toThrow('cancelGraceMs must be a whole number of milliseconds from 0 to 10000')
    }
  })
})

describe('execute: body failures and output checks', () => {
  it.each([
    ['an Error', () => { throw new Error('disk on fire') }, { code: 'TOOL_FAILED', message: 'disk on fire' }],
    ['a rejected promise', async () => { throw new TypeError('bad thing') }, { code: 'TOOL_FAILED', message: 'bad thing' }],
    ['a ReinError, keeping its code', () => { throw new ReinError('FILE_NOT_FOUND', 'no such file: a') }, { code: 'FILE_NOT_FOUND', message: 'no such file: a' }],
    ['a string', () => { throw 'plain string' }, { code: 'TOOL_FAILED', message: 'plain string' }],
    ['an Error without a message', () => { throw new Error('') }, { code: 'TOOL_FAILED', message: 'probe failed without saying why (it threw an Error with no message)' }],
  ])('turns %s into an error result the model reads as Error: <message>', async (_label, behaviour, error) => {
    const { tools } = await createRegistry()
    tools.register(probe(behaviour).tool)
    expect(await tools.execute(call('probe', { path: 'a' }))).toEqual({
      isError: true, error, content: [{ type: 'text', text: `Error: ${error.message}` }],
    })
  })

  it('rejects output that is not JSON or not the declared shape', async () => {
    const { tools } = await createRegistry()
    let output: unknown = new Date(0)
    tools.register(defineTool({
      name: 'stat', description: 'Reports a size.', parameters: {},
      output: { schema: { type: 'object', additionalProperties: false, properties: { size: { type: 'integer', required: true } } }, render: (_a, v) => String(v.size) },
      execute: () => output as { size: number },
    }))
    const notJson = await tools.execute(call('stat', {}))
    expect(notJson.isError && notJson.error).toEqual({ code: 'INVALID_TOOL_OUTPUT', message: 'stat returned a value that is not JSON: $: a Date is not a plain object' })
    output = { size: 1.5, extra: true }
    const wrongShape = await tools.execute(call('stat', {}))
    expect(wrongShape.isError && wrongShape.error).toEqual({
      code: 'INVALID_TOOL_OUTPUT',
      message: 'stat returned a value that does not match its output schema: $.size: expected an integer but got number 1.5; $.extra: unknown property (allowed: size)',
    })
  })

  it('reports a render failure, and keeps the result when only presentationMeta fails', async () => {
    const { root, tools } = await createRegistry()
    tools.register(defineTool({
      name: 'r', description: 'Bad render.', parameters: {},
      output: { schema: { type: 'null' }, render: () => { throw new Error('template missing') } },
      execute: () => null,
    }))
    tools.register(defineTool({
      name: 'm', description: 'Bad meta.', parameters: {},
      output: { schema: { type: 'null' }, render: () => 'fine', presentationMeta: () => { throw new Error('meta bug') } },
      execute: () => null,
    }))
    const render = await tools.execute(call('r', {}))
    expect(render.isError && render.error).toEqual({ code: 'TOOL_FAILED', message: 'r could not render its result: template missing' })
    expect(await tools.execute(call('m', {}))).toEqual({ isError: false, value: null, content: [{ type: 'text', text: 'fine' }] })
    expect(root.logger.buffer.some((message) => message.type === 'error' && String(message.args[0]).includes('presentationMeta failed'))).toBe(true)
  })
})

describe('execute: a body that throws something other than an Error', () => {
  const circular = () => {
    const value: Record<string, unknown> = { status: 503 }
    value.self = value
    return value
  }
  const manyFields = () => Object.fromEntries(Array.from({ length: 200 }, (_, index) => [`field${index}`, 'x'.repeat(100)]))
  it.each([
    ['an object with a message', () => ({ message: 'quota exceeded' }), 'quota exceeded'],
    ['an object with a code and a message', () => ({ code: 'E_QUOTA', message: 'quota exceeded' }), 'E_QUOTA: quota exceeded'],
    ['an object whose message already names its code', () => ({ code: 'ENOENT', message: 'ENOENT: no such file' }), 'ENOENT: no such file'],
    ['an object with a code only', () => ({ code: 'E_QUOTA' }), 'probe failed: it threw {"code":"E_QUOTA"}'],
    ['an object with neither', () => ({ status: 503, retry: true }), 'probe failed: it threw {"status":503,"retry":true}'],
    ['an object with a circular reference', circular, 'probe failed: it threw {"status":503,"self":"{…}"}'],
    ['an object with a numeric code and a message', () => ({ code: -32601, message: 'method not found' }), '-32601: method not found'],
    ['an object holding a 50 MB Buffer', () => ({ status: 500, body: Buffer.alloc(50 * 1024 * 1024) }), 'probe failed: it threw {"status":500,"body":"[52428800 bytes]"}'],
    ['an object holding rows', () => ({ rows: Array.from({ length: 100_000 }, (_, index) => ({ index })) }), 'probe failed: it threw {"rows":"[100000 items]"}'],
    ['an object holding the request it made', () => ({ status: 401, config: { headers: { Authorization: 'Bearer sk-live-1234' } } }), 'probe failed: it threw {"status":401,"config":"{…}"}'],
    ['an object with a credential at its top', () => ({ status: 401, apiKey: 'sk-live-1234', accessToken: 'tok' }), 'probe failed: it threw {"status":401,"apiKey":"***","accessToken":"***"}'],
    ['a string', () => 'quota exceeded', 'quota exceeded'],
    ['a number', () => 42, '42'],
    ['null', () => null, 'probe failed without saying why (it threw null)'],
    ['undefined', () => undefined, 'probe failed without saying why (it threw undefined)'],
    ['an empty object', () => ({}), 'probe failed without saying why (it threw an object)'],
  ])('tells the model what was thrown, not "failed without saying why", for %s', async (_case, make, message) => {
    const { tools } = await createRegistry()
    tools.register(probe(() => { throw make() }).tool)
    const result = await tools.execute(call('probe', { path: 'a' }))
    expect(result).toEqual({ isError: true, error: { code: 'TOOL_FAILED', message }, content: [{ type: 'text', text: `Error: ${message}` }] })
  })

  it.each([
    ['an object with many fields', manyFields],
    ['an object with a huge message', () => ({ code: 'E_BIG', message: 'y'.repeat(1_000_000) })],
    ['a huge string', () => 'z'.repeat(1_000_000)],
  ])('keeps the message short when the body throws %s', async (_case, make) => {
    const { tools } = await createRegistry()
    tools.register(probe(() => { throw make() }).tool)
    const result = await tools.execute(call('probe', { path: 'a' }))
    expect(result.isError && result.error.code).toBe('TOOL_FAILED')
    const message = result.isError ? result.error.message : ''
    expect(message.length).toBeLessThanOrEqual(2_100)
    expect(message).toMatch(/…/)
  })

  it('masks the value of an environment secret in what a body threw', async () => {
    process.env.REIN_TEST_THROWN_KEY = 'sk-thrown-secret-123456'
    try {
      const { tools } = await createRegistry()
      tools.register(probe(() => { throw { message: 'rejected key sk-thrown-secret-123456' } }).tool)
      const result = await tools.execute(call('probe', { path: 'a' }))
      expect(result.isError && result.error.message).not.toContain('sk-thrown-secret-123456')
    } finally {
      delete process.env.REIN_TEST_THROWN_KEY
    }
  })

  it('says what a render threw when it is a plain object', async () => {
    const { tools } = await createRegistry()
    tools.register(defineTool({
      name: 'r', description: 'Bad render.', parameters: {},
      output: { schema: { type: 'null' }, render: () => { throw { code: 'E_TEMPLATE', message: 'template missing' } } },
      execute: () => null,
    }))
    const result = await tools.execute(call('r', {}))
    expect(result.isError && result.error).toEqual({ code: 'TOOL_FAILED', message: 'r could not render its result: E_TEMPLATE: template missing' })
  })
})

describe('execute: post-execute hooks', () => {
  it('runs as a waterfall in registration order: each hook sees the previous replacement', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    const seen: string[] = []
    tools.postExecute((_call, result) => { seen.push(JSON.stringify(result.content)); return { kind: 'replace-value', value: { text: 'replaced' } } })
    tools.postExecute((_call, result) => { seen.push(JSON.stringify(result.value)); return { kind: 'replace-content', content: 'redacted' } })
    tools.postExecute(() => ({ kind: 'accept' }))
    const result = await tools.execute(call('echo', { text: 'secret' }))
    expect(result).toEqual({ isError: false, value: { text: 'replaced' }, content: [{ type: 'text', text: 'redacted' }], meta: { times: 1 } })
    expect(seen).toEqual(['[{"type":"text","text":"secret"}]', '{"text":"replaced"}'])
  })

  it('revalidates a replaced value against the output schema', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    tools.postExecute(() => ({ kind: 'replace-value', value: { wrong: 1 } }))
    const result = await tools.execute(call('echo', { text: 'x' }))
    expect(result.isError && result.error.code).toBe('INVALID_TOOL_OUTPUT')
  })

  it('turns a block into a BLOCKED error carrying the feedback, and stops the waterfall', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    const later = vi.fn<() => undefined>()
    tools.postExecute(() => ({ kind: 'block', feedback: 'output contained a credential; ask the user' }))
    tools.postExecute(later)
    expect(await tools.execute(call('echo', { text: 'x' }))).toEqual({
      isError: true,
      error: { code: 'BLOCKED', message: 'output contained a credential; ask the user' },
      content: [{ type: 'text', text: 'Error: output contained a credential; ask the user' }],
    })
    expect(later).not.toHaveBeenCalled()
  })

  it('blocks when a hook throws, and skips hooks for failed calls', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    const hook = vi.fn<() => never>(() => { throw new Error('scanner offline') })
    tools.postExecute(hook)
    const result = await tools.execute(call('echo', { text: 'x' }))
    expect(result.isError && result.error).toEqual({ code: 'BLOCKED', message: 'echo: the post-execute hook "Mock" of plugin "test-owner" failed: scanner offline' })
    await tools.execute(call('echo', { nope: 1 }))
    expect(hook).toHaveBeenCalledTimes(1)
  })
})

describe('execute: result observers', () => {
  it('see every outcome, and a throwing or rejecting observer changes nothing', async () => {
    const { root, tools } = await createRegistry()
    tools.register(echo)
    const seen: string[] = []
    tools.onResult(() => { throw new Error('observer crashed') })
    tools.onResult(async () => { throw new Error('observer rejected') })
    tools.onResult((request, result) => { seen.push(`${request.toolName}:${result.isError ? result.error.code : 'ok'}`) })
    const ok = await tools.execute(call('echo', { text: 'x' }, { context: { sessionId: 's' } }))
    await tools.execute(call('missing', {}))
    await tools.execute(call('echo', '{'))
    expect(ok.isError).toBe(false)
    expect(seen).toEqual(['echo:ok', 'missing:UNKNOWN_TOOL', 'echo:INVALID_ARGS'])
    await vi.waitFor(() => {
      const warnings = root.logger.buffer.filter((message) => message.type === 'error').map((message) => String(message.args[1]))
      expect(warnings.filter((text) => text.includes('observer crashed'))).toHaveLength(3)
      expect(warnings.filter((text) => text.includes('observer rejected'))).toHaveLength(3)
    })
  })
})
