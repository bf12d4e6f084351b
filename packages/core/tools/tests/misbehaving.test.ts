// What a misbehaving tool package or hook can throw at the pipeline: every call still ends in exactly one result.
import { ReinError } from '@rein/base'
import { describe, expect, it } from 'vitest'
import { defineTool, type ToolResult } from '../src/index.ts'
import { call, createRegistry, echo } from './fixtures.ts'

type Tools = Awaited<ReturnType<typeof createRegistry>>['tools']

/** A Proxy every trap of which throws: `instanceof`, a property read or `Object.keys` on it throw. */
const hostileProxy = () => new Proxy({}, {
  get() { throw new Error('get trap') },
  getPrototypeOf() { throw new Error('getPrototypeOf trap') },
  ownKeys() { throw new Error('ownKeys trap') },
  has() { throw new Error('has trap') },
  getOwnPropertyDescriptor() { throw new Error('getOwnPropertyDescriptor trap') },
})
/** A revoked Proxy: any operation on it throws a TypeError. */
const revokedProxy = () => {
  const { proxy, revoke } = Proxy.revocable(new Error('gone'), {})
  revoke()
  return proxy
}
const unreadable = [['a Proxy whose traps throw', hostileProxy], ['a revoked Proxy', revokedProxy]] as const

function throwing(thrown: () => unknown, where: 'execute' | 'async execute' | 'render') {
  return defineTool({
    name: 'bad',
    description: 'Misbehaves.',
    parameters: {},
    output: { schema: { type: 'json' }, render: () => { if (where === 'render') throw thrown(); return 'ok' } },
    execute: where === 'async execute' ? async () => { throw thrown() } : () => { if (where === 'execute') throw thrown(); return 1 },
  })
}

describe.each(unreadable)('a thrown value that cannot be read (%s)', (_label, make) => {
  it.each(['execute', 'async execute', 'render'] as const)('thrown by %s still ends the call as TOOL_FAILED instead of rejecting execute', async (where) => {
    const { tools } = await createRegistry()
    tools.register(throwing(make, where))
    const result: ToolResult = await tools.execute(call('bad', {}))
    expect(result.isError && result.error.code).toBe('TOOL_FAILED')
    expect(result.isError && result.error.message).toMatch(/it threw an object that cannot be read/)
  })

  it('thrown by an execute wrapper still ends the call as TOOL_FAILED instead of rejecting execute', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    tools.wrapExecute(() => { throw make() })
    const result = await tools.execute(call('echo', { text: 'a' }))
    expect(result.isError && result.error).toEqual({ code: 'TOOL_FAILED', message: 'echo failed without saying why (it threw an object that cannot be read)' })
  })

  it('thrown by a post-execute hook still blocks the result instead of rejecting execute', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    tools.postExecute(function audit() { throw make() })
    const result = await tools.execute(call('echo', { text: 'a' }))
    expect(result.isError && result.error).toEqual({ code: 'BLOCKED', message: 'echo: the post-execute hook "audit" of plugin "test-owner" failed: it threw an object that cannot be read' })
  })

  it('given as the abort reason of a signal a wrapper swapped in, still ends the call as ABORTED', async () => {
    const { tools } = await createRegistry()
    tools.register(defineTool({
      name: 'slow', description: 'Waits for its signal.', parameters: {}, output: { schema: { type: 'null' }, render: () => 'done' },
      execute: (_args, run) => new Promise<null>((_, reject) => run.signal.addEventListener('abort', () => reject(run.signal.reason))),
    }))
    tools.wrapExecute((_call, next) => {
      const own = new AbortController()
      const outcome = next(own.signal)
      own.abort(make())
      return outcome
    })
    const result = await tools.execute(call('slow', {}))
    expect(result.isError && result.error.code).toBe('ABORTED')
  })
})

it('a Proxy that passes as a ReinError but throws when its code is read still ends the call as TOOL_FAILED instead of rejecting execute', async () => {
  const posing = () => new Proxy(new ReinError('E_FAKE', 'posing'), {
    get(target, key) {
      if (key === Symbol.for('rein.error')) return true
      if (key === 'code' || key === 'message') throw new Error(`${String(key)} trap`)
      return Reflect.get(target, key)
    },
  })
  const { tools } = await createRegistry()
  tools.register(throwing(posing, 'execute'))
  const result = await tools.execute(call('bad', {}))
  expect(result.isError && result.error.code).toBe('TOOL_FAILED')
})

describe('hooks that return the wrong shape', () => {
  it.each([null, 'allow', 7])('a pre-execute policy returning %j denies as an unknown decision, not with a raw TypeError', async (decision) => {
    const { tools } = await createRegistry()
    tools.register(echo)
    tools.preExecute(() => decision as never)
    const result = await tools.execute(call('echo', { text: 'a' }))
    expect(result.isError && result.error).toEqual({ code: 'DENIED', message: 'echo was denied: a pre-execute policy returned an unknown decision' })
  })
})

describe('secrets in what a body threw', () => {
  it.each([
    ['an Error', () => new Error('GET https://api.example.com/v1?key=sk-thrown-error-secret-9876 failed: 401')],
    ['an Error subclass', () => new TypeError('bad header Authorization: Bearer sk-thrown-error-secret-9876')],
  ])('%s whose message holds the value of an environment secret reaches the model masked, as a thrown string does', async (_kind, make) => {
    process.env.REIN_TEST_ERROR_TOKEN = 'sk-thrown-error-secret-9876'
    try {
      const { tools } = await createRegistry()
      tools.register(throwing(make, 'execute'))
      const result = await tools.execute(call('bad', {}))
      expect(result.isError && result.error.code).toBe('TOOL_FAILED')
      expect(JSON.stringify(result)).not.toContain('sk-thrown-error-secret-9876')
      expect(result.isError && result.error.message).toContain('***')
    } finally {
      delete process.env.REIN_TEST_ERROR_TOKEN
    }
  })
})

describe('secrets in what a policy, a guard or a wrapper\'s abort reason said', () => {
  const SECRET = 'sk-thrown-error-secret-9876'
  const quoting = () => new Error(`GET https://api.example.com/v1?key=${SECRET} failed: 401`)
  const waitsForSignal = defineTool({
    name: 'slow', description: 'Waits for its signal.', parameters: {}, output: { schema: { type: 'null' }, render: () => 'done' },
    execute: (_args, run) => new Promise<null>((_, reject) => run.signal.addEventListener('abort', () => reject(run.signal.reason))),
  })
  /** A call a denial stops before it runs, or (ABORTED) one that runs until its signal aborts. */
  const callFor = (code: string) => (code === 'ABORTED' ? call('slow', {}) : call('echo', { text: 'a' }))

  it.each([
    ['a pre-execute policy', 'DENIED', (tools: Tools) => tools.preExecute(() => { throw quoting() })],
    ['a guard', 'DENIED', (tools: Tools) => tools.guard(() => { throw quoting() })],
    ['a wrapper\'s abort reason', 'ABORTED', (tools: Tools) => tools.wrapExecute((_call, next) => {
      const own = new AbortController()
      const outcome = next(own.signal)
      own.abort(quoting())
      return outcome
    })],
  ])('%s quoting the value of an environment secret reaches the result masked, not with the key in it', async (_who, code, install) => {
    process.env.REIN_TEST_ERROR_TOKEN = SECRET
    try {
      const { tools } = await createRegistry()
      tools.register(echo)
      tools.register(waitsForSignal)
      install(tools)
      const result = await tools.execute(callFor(code))
      expect(result.isError && result.error.code).toBe(code)
      expect(JSON.stringify(result)).not.toContain(SECRET)
      expect(result.isError && result.error.message).toContain('key=*** failed: 401')
    } finally {
      delete process.env.REIN_TEST_ERROR_TOKEN
    }
  })

  it.each([
    ['thrown by a pre-execute policy', 'DENIED', (tools: Tools, huge: string) => tools.preExecute(() => { throw huge })],
    ['thrown by a guard', 'DENIED', (tools: Tools, huge: string) => tools.guard(() => { throw huge })],
    ['given as a wrapper\'s abort reason', 'ABORTED', (tools: Tools, huge: string) => tools.wrapExecute((_call, next) => {
      const own = new AbortController()
      const outcome = next(own.signal)
      own.abort(huge)
      return outcome
    })],
  ])('a megabyte string %s ends the call with a message cut short, not the whole string', async (_who, code, install) => {
    const { tools } = await createRegistry()
    tools.register(echo)
    tools.register(waitsForSignal)
    install(tools, 'x'.repeat(1_000_000))
    const result = await tools.execute(callFor(code))
    expect(result.isError && result.error.code).toBe(code)
    expect(result.isError && result.error.message.length).toBeLessThan(3_000)
  })
})

it('a ReinError a body throws keeps its code, with an environment secret in its message masked', async () => {
  process.env.REIN_TEST_ERROR_TOKEN = 'sk-thrown-error-secret-9876'
  try {
    const { tools } = await createRegistry()
    tools.register(throwing(() => new ReinError('E_UPSTREAM', 'upstream refused key sk-thrown-error-secret-9876; check the key'), 'execute'))
    const result = await tools.execute(call('bad', {}))
    expect(result.isError && result.error).toEqual({ code: 'E_UPSTREAM', message: 'upstream refused key ***; check the key' })
  } finally {
    delete process.env.REIN_TEST_ERROR_TOKEN
  }
})

/** A promise and what settles it (Node 20 has no Promise.withResolvers). */
function signal() {
  let resolve!: () => void
  const promise = new Promise<void>((settle) => { resolve = settle })
  return { promise, resolve }
}

describe('a batch of calls run together and cancelled while some run', () => {
  it('gives every call exactly one result, in the order asked, whatever its body, hook or arguments do', async () => {
    const { tools } = await createRegistry()
    const started = { waits: signal(), deaf: signal(), asked: signal() }
    const tool = (name: string, execute: (signal: AbortSignal) => unknown, extra: object = {}) => defineTool({
      name, description: 'Under test.', parameters: {}, output: { schema: { type: 'json' }, render: () => name },
      execute: (_args, run) => execute(run.signal) as never, ...extra,
    })
    tools.register(echo)
    tools.register(tool('waits', (signal) => new Promise((_, reject) => {
      started.waits.resolve()
      signal.addEventListener('abort', () => reject(signal.reason))
    })))
    tools.register(tool('deaf', () => { started.deaf.resolve(); return new Promise(() => {}) }))
    tools.register(tool('writes', () => 'wrote', { effects: ['write'] }))
    tools.register(tool('hostile', () => { throw revokedProxy() }))
    const approval = { request: () => { started.asked.resolve(); return new Promise<never>(() => {}) } }
    const seen: string[] = []
    tools.onResult((request) => { seen.push(request.callId) })

    const controller = new AbortController()
    const batch = [
      ['echo', '{"text":"a"}'], ['waits', '{}'], ['hostile', '{}'], ['deaf', '{}'], ['writes', '{}'],
      ['nope', '{}'], ['echo', '{"text":'], ['echo', '{"text":"a","__proto__":{"x":1}}'],
    ] as const
    const pending = batch.map(([name, raw], i) => tools.execute({ callId: `c${i}`, name, arguments: raw, signal: controller.signal, approval: () => approval }))
    // The calls that end on their own have ended (a result read after the abort would be ABORTED).
    await Promise.all([started.waits.promise, started.deaf.promise, started.asked.promise, pending[0], pending[2], pending[5], pending[6], pending[7]])
    controller.abort()
    const late = await tools.execute({ callId: 'late', name: 'echo', arguments: '{"text":"a"}', signal: controller.signal })
    const results = await Promise.all(pending)

    expect(results.map((result) => (result.isError ? result.error.code : 'ok'))).toEqual([
      'ok', 'ABORTED', 'TOOL_FAILED', 'ABORTED', 'ABORTED_BEFORE_DISPATCH', 'UNKNOWN_TOOL', 'INVALID_ARGS', 'INVALID_ARGS',
    ])
    expect(late.isError && late.error.code).toBe('ABORTED_BEFORE_DISPATCH')
    expect(seen.sort()).toEqual(['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'late'])
  })
})

describe('an async render', () => {
  it('that rejects fails the call saying the promise is not awaited, and leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => { unhandled.push(reason) }
    process.on('unhandledRejection', onUnhandled)
    try {
      const { tools } = await createRegistry()
      tools.register(defineTool({
        name: 'r', description: 'Renders asynchronously.', parameters: {},
        output: { schema: { type: 'null' }, render: (async () => { throw new Error('template not loaded') }) as never },
        execute: () => null,
      }))
      const result = await tools.execute(call('r', {}))
      expect(result.isError && result.error).toEqual({ code: 'TOOL_FAILED', message: 'r could not render its result: output.render returned a promise, which is not awaited; it must be a string or an array of content parts, given synchronously' })
      // A rejection nobody handles is reported after the microtasks run out: give it a macrotask.
      await new Promise((resolve) => setImmediate(resolve))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })

  it('given by a post-execute hook as replace-content is blocked saying so, and leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => { unhandled.push(reason) }
    process.on('unhandledRejection', onUnhandled)
    try {
      const { tools } = await createRegistry()
      tools.register(echo)
      tools.postExecute(function redact() { return { kind: 'replace-content', content: Promise.reject(new Error('late')) as never } })
      const result = await tools.execute(call('echo', { text: 'a' }))
      expect(result.isError && result.error).toEqual({ code: 'BLOCKED', message: 'echo: the post-execute hook "redact" of plugin "test-owner" gave invalid content: its replace-content is a promise, which is not awaited; it must be a string or an array of content parts, given synchronously' })
      await new Promise((resolve) => setImmediate(resolve))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })
})

/** The rejections left unhandled while `run` ran, and a macrotask after (when Node reports them). */
async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown) => { unhandled.push(reason) }
  process.on('unhandledRejection', onUnhandled)
  try {
    await run()
    await new Promise((resolve) => setImmediate(resolve))
  } finally {
    process.off('unhandledRejection', onUnhandled)
  }
  return unhandled
}

describe('an async predicate where a synchronous one is asked for', () => {
  it('isConcurrencySafe that rejects counts as not safe, and leaves no unhandled rejection', async () => {
    const { tools } = await createRegistry()
    tools.register({ ...echo, isConcurrencySafe: (async () => { throw new Error('lookup failed') }) as never })
    const unhandled = await unhandledDuring(async () => {
      expect(tools.isConcurrencySafe('echo', '{"text":"a"}')).toBe(false)
    })
    expect(unhandled).toEqual([])
  })

  it('availableTo that rejects keeps the tool from the run, and leaves no unhandled rejection', async () => {
    const { tools } = await createRegistry()
    tools.register({ ...echo, availableTo: (async () => { throw new Error('lookup failed') }) as never })
    const identity = { agent: 'main', sessionId: 's', conversationId: 'c', runId: 'r', turnId: 't', anchor: 'a', depth: 0 } as never
    const unhandled = await unhandledDuring(async () => {
      expect(tools.schemas(undefined, identity)).toEqual([])
      const result = await tools.execute(call('echo', { text: 'a' }, { context: { identity } }))
      expect(result.isError && result.error.code).toBe('UNKNOWN_TOOL')
    })
    expect(unhandled).toEqual([])
  })
})

it('an execute wrapper that drops the next() an inner wrapper misused fails the call WRAPPER_MISUSE, and leaves no unhandled rejection', async () => {
  const { tools } = await createRegistry()
  tools.register(echo)
  tools.wrapExecute(async (_call, next) => {
    void next()
    return { ok: true, value: { text: 'forged' } }
  })
  tools.wrapExecute(async (_call, next) => {
    await next()
    return next()
  })
  const unhandled = await unhandledDuring(async () => {
    const result = await tools.execute(call('echo', { text: 'a' }))
    expect(result.isError && result.error.code).toBe('WRAPPER_MISUSE')
  })
  expect(unhandled).toEqual([])
})
