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
