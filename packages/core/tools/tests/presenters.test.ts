import { describe, expect, it } from 'vitest'
import { defineTool, type DurableToolResult } from '../src/index.ts'
import { createRegistry, echo } from './fixtures.ts'

/** Counts body runs: presenters work from the log alone and must never cause one. */
let bodyRuns = 0
const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file.',
  parameters: { path: { type: 'string', required: true }, offset: { type: 'integer' } },
  output: {
    schema: { type: 'object', additionalProperties: false, properties: { text: { type: 'string', required: true } } },
    render: (_args, value) => value.text,
    presentationMeta: (args, value) => ({ lines: value.text.split('\n').length, start: args.offset ?? 1 }),
  },
  execute: () => { bodyRuns++; return { text: '' } },
  isConcurrencySafe: (args) => !args.path.endsWith('.lock'),
  presentCall: (args) => ({ card: 'read', title: `Read ${args.path}`, path: args.path }),
  presentResult: (args, result) => {
    const meta = result.meta as { start: number } | undefined
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
    return { card: 'read', path: args.path, startLine: meta?.start ?? 1, lines: text.split('\n') }
  },
  summarize: (args, result) => `read ${args.path}${result.isError ? ' (failed)' : ''}`,
})

describe('presenters', () => {
  it('build cards from arguments and a result that went through the log', async () => {
    const { tools } = await createRegistry()
    tools.register(readFile)
    // What a session log keeps, serialized and read back: no value, no live objects.
    const replayed = JSON.parse(JSON.stringify({ isError: false, content: [{ type: 'text', text: 'a\nb' }], meta: { lines: 2, start: 5 } })) as DurableToolResult
    const raw = '{"path":"src/x.ts","offset":5}'
    expect(tools.presentCall('read_file', raw)).toEqual({ card: 'read', title: 'Read src/x.ts', path: 'src/x.ts' })
    expect(tools.presentResult('read_file', raw, replayed)).toEqual({ card: 'read', path: 'src/x.ts', startLine: 5, lines: ['a', 'b'] })
    expect(tools.summarize('read_file', raw, replayed)).toBe('read src/x.ts')
    expect(tools.isConcurrencySafe('read_file', raw)).toBe(true)
    expect(bodyRuns).toBe(0)
  })

  it('fall back to generic cards for unknown tools, invalid arguments and throwing presenters', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    tools.register({
      ...readFile,
      name: 'broken',
      presentCall: () => { throw new Error('presenter bug') },
      presentResult: () => { throw new Error('presenter bug') },
      summarize: () => { throw new Error('presenter bug') },
    })
    const failed: DurableToolResult = { isError: true, content: [{ type: 'text', text: 'Error: no such file\nmore' }] }
    expect(tools.presentCall('gone', '{"a":1}')).toEqual({ card: 'generic', title: 'gone', detail: '{"a":1}' })
    expect(tools.presentCall('broken', '{"path":"x"}')).toEqual({ card: 'generic', title: 'broken', detail: '{"path":"x"}' })
    expect(tools.presentCall('read_file', '{not json')).toEqual({ card: 'generic', title: 'read_file', detail: '{not json' })
    expect(tools.presentResult('broken', '{"path":"x"}', failed)).toEqual({ card: 'generic', title: 'broken', text: 'Error: no such file\nmore' })
    expect(tools.summarize('broken', '{"path":"x"}', failed)).toBe('broken failed: Error: no such file')
    expect(tools.summarize('echo', '{"text":"hi"}', { isError: false, content: [{ type: 'text', text: 'hi' }] })).toBe('echo succeeded: hi')
    const long = tools.presentCall('gone', JSON.stringify({ text: 'x'.repeat(500) }))
    expect(long.card === 'generic' && long.detail?.length).toBe(120)
  })
})

describe('isConcurrencySafe', () => {
  it('counts only an exact true', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    tools.register(readFile)
    tools.register(defineTool({ ...echo, name: 'truthy', isConcurrencySafe: (() => 1) as unknown as () => boolean }))
    tools.register(defineTool({ ...echo, name: 'throws', isConcurrencySafe: () => { throw new Error('x') } }))
    tools.register(defineTool({ ...echo, name: 'unset', isConcurrencySafe: undefined }))
    expect(tools.isConcurrencySafe('echo', '{"text":"a"}')).toBe(true)
    expect(tools.isConcurrencySafe('read_file', '{"path":"a.ts"}')).toBe(true)
    expect(tools.isConcurrencySafe('read_file', '{"path":"pnpm.lock"}')).toBe(false)
    expect(tools.isConcurrencySafe('read_file', '{"path":3}')).toBe(false)
    expect(tools.isConcurrencySafe('truthy', '{"text":"a"}')).toBe(false)
    expect(tools.isConcurrencySafe('throws', '{"text":"a"}')).toBe(false)
    expect(tools.isConcurrencySafe('unset', '{"text":"a"}')).toBe(false)
    expect(tools.isConcurrencySafe('missing', '{}')).toBe(false)
  })
})

describe('misbehaving presenters', () => {
  const cyclic = () => {
    const card: Record<string, unknown> = { card: 'generic', title: 'loop' }
    card.self = card
    return card
  }
  const throwingGetter = () => ({ card: 'generic', get title(): string { throw new Error('getter bug') } })
  const misbehaviours: [string, () => unknown][] = [
    ['returns a number', () => 42],
    ['returns a string', () => 'a card'],
    ['returns an unknown card kind', () => ({ card: 'hologram', title: 'x' })],
    ['returns a card missing a required field', () => ({ card: 'read', title: 'x' })],
    ['returns a field of the wrong type', () => ({ card: 'terminal', title: 'x', command: ['ls'], output: 1 })],
    ['returns a cyclic object', cyclic],
    ['returns an object whose getter throws', throwingGetter],
    ['returns a promise that rejects', () => Promise.reject(new Error('async presenter'))],
    ['throws', () => { throw new Error('presenter bug') }],
  ]
  const durable: DurableToolResult = { isError: false, content: [{ type: 'text', text: 'out' }] }

  async function broken(present: () => unknown) {
    const { root, tools } = await createRegistry()
    tools.register({
      ...readFile,
      name: 'broken',
      presentCall: present as never,
      presentResult: present as never,
      summarize: present as never,
    })
    const logged = () => root.logger.buffer.filter((message) => message.name === 'broken' && message.type === 'error')
    return { tools, logged }
  }

  it.each(misbehaviours)('falls back to the generic call card and logs when presentCall %s', async (_label, present) => {
    const { tools, logged } = await broken(present)
    const view = tools.presentCall('broken', '{"path":"x"}')
    expect(view).toEqual({ card: 'generic', title: 'broken', detail: '{"path":"x"}' })
    expect(() => JSON.stringify(view)).not.toThrow()
    await new Promise((resolve) => setImmediate(resolve))
    expect(logged().map((message) => String(message.args[0]))).toEqual([expect.stringContaining('presentCall')])
  })

  it.each(misbehaviours)('falls back to the generic result card and logs when presentResult %s', async (_label, present) => {
    const { tools, logged } = await broken(present)
    const view = tools.presentResult('broken', '{"path":"x"}', durable)
    expect(view).toEqual({ card: 'generic', title: 'broken', text: 'out' })
    expect(() => JSON.stringify(view)).not.toThrow()
    await new Promise((resolve) => setImmediate(resolve))
    expect(logged().map((message) => String(message.args[0]))).toEqual([expect.stringContaining('presentResult')])
  })

  it.each(misbehaviours.filter(([label]) => label !== 'returns a string'))('falls back to the generic summary and logs when summarize %s', async (_label, present) => {
    const { tools, logged } = await broken(present)
    expect(tools.summarize('broken', '{"path":"x"}', durable)).toBe('broken succeeded: out')
    await new Promise((resolve) => setImmediate(resolve))
    expect(logged().map((message) => String(message.args[0]))).toEqual([expect.stringContaining('summarize')])
  })

  it('returns a plain copy of a valid card: extra fields are a wrong shape, undefined optional fields are dropped', async () => {
    const { tools } = await createRegistry()
    const source = { card: 'search', title: 'Find x', query: 'x', path: undefined }
    tools.register({ ...readFile, name: 'ok', presentCall: () => source as never })
    const view = tools.presentCall('ok', '{"path":"x"}')
    expect(view).toEqual({ card: 'search', title: 'Find x', query: 'x' })
    expect(view).not.toBe(source)
    expect(Object.keys(view)).toEqual(['card', 'title', 'query'])
    tools.register({ ...readFile, name: 'extra', presentCall: () => ({ card: 'diff', title: 'Edit a', path: 'a', html: '<b>' }) as never })
    expect(tools.presentCall('extra', '{"path":"x"}')).toEqual({ card: 'generic', title: 'extra', detail: '{"path":"x"}' })
  })

  it.each([
    ['returns a cyclic object', cyclic],
    ['returns an object whose getter throws', () => ({ get lines(): number { throw new Error('getter bug') } })],
    ['returns a function', () => () => 1],
    ['returns a promise that rejects', () => Promise.reject(new Error('async meta'))],
  ])('keeps the result without meta, and logs, when presentationMeta %s', async (_label, meta) => {
    const { root, tools } = await createRegistry()
    tools.register(defineTool({
      name: 'meta', description: 'Bad meta.', parameters: {},
      output: { schema: { type: 'null' }, render: () => 'fine', presentationMeta: meta as never },
      execute: () => null,
    }))
    expect(await tools.execute({ callId: 'c', name: 'meta', arguments: '{}', signal: new AbortController().signal }))
      .toEqual({ isError: false, value: null, content: [{ type: 'text', text: 'fine' }] })
    await new Promise((resolve) => setImmediate(resolve))
    const logged = root.logger.buffer.filter((message) => message.name === 'meta' && message.type === 'error')
    expect(logged.map((message) => String(message.args[0]))).toEqual([expect.stringContaining('presentationMeta')])
  })
})
