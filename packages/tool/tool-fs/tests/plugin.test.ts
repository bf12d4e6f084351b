import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context } from '@deepseek-ai/cordis'
import { isReinError, type JsonValue } from '@rein/base'
import { loadComposition, type Composition } from '@rein/compose'
import ToolRegistry, { defineTool, type DurableToolResult, type ToolResult, type ToolRun } from '@rein/tools'
import { afterEach, describe, expect, it } from 'vitest'
import * as toolFs from '../src/index.ts'
import { FileReads } from '../src/index.ts'
import { boot, codeOf, useFolders, write } from './harness.ts'

const folders = useFolders()
const ALL = ['edit', 'glob', 'grep', 'multi_edit', 'read', 'write']

describe('the plugin', () => {
  it('registers the six tools with their effects and concurrency', async () => {
    const { root } = await boot(folders())
    expect(root.tools.list()).toEqual(ALL)
    const effects = Object.fromEntries(ALL.map((name) => [name, root.tools.info(name)?.effects]))
    expect(effects).toEqual({ edit: ['write'], glob: ['read'], grep: ['read'], multi_edit: ['write'], read: ['read'], write: ['write'] })
    const safe = ALL.filter((name) => root.tools.isConcurrencySafe(name, '{"path":"a","pattern":"b","content":"","old_string":"x","new_string":"y","edits":[]}'))
    expect(safe).toEqual(['glob', 'grep', 'read'])
    expect(ALL.filter((name) => root.tools.info(name)?.replaySafe)).toEqual(['glob', 'grep', 'read'])
  })

  it('registers only read, glob and grep in read-only mode', async () => {
    const { root } = await boot(folders(), { config: { readOnly: true } })
    expect(root.tools.list()).toEqual(['glob', 'grep', 'read'])
  })

  it("write's description never promises a file longer than the registry lets a call's arguments carry", async () => {
    const { root } = await boot(folders())
    const described = () => root.tools.schemas().find((schema) => schema.name === 'write')?.description ?? ''
    // The registry's default argument limit (1 MiB) is below tool-fs's default file limit (10 MiB).
    expect(described()).not.toContain('10.0 MiB')
    expect(described()).toContain('1.0 MiB')
    const big = 'x'.repeat(1_048_576)
    const refused = await root.tools.execute({ callId: 'c', name: 'write', arguments: JSON.stringify({ path: 'big.txt', content: big }), signal: new AbortController().signal, context: {} })
    expect(refused).toMatchObject({ isError: true })

    const roomy = new Context()
    await roomy.plugin(ToolRegistry, { askFor: [], maxArgumentBytes: 64 * 1024 * 1024 })
    await roomy.plugin(toolFs, {})
    const text = roomy.tools.schemas().find((schema) => schema.name === 'write')?.description ?? ''
    expect(text).toContain('10.0 MiB')
    expect(text).not.toContain('arguments')
  })

  it('takes its tools and its tool-run field away when disposed', async () => {
    const { root, fiber } = await boot(folders())
    const seen: (FileReads | undefined)[] = []
    root.tools.register(defineTool({
      name: 'probe', description: 'Sees the run.', parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: (_args, run: ToolRun) => {
        seen.push(run.fileReads)
        return 'ok'
      },
    }))
    const probe = () => root.tools.execute({ callId: 'p', name: 'probe', arguments: '{}', signal: new AbortController().signal, context: { sessionId: 's' } })
    await probe()
    await fiber.dispose()
    await probe()
    expect(root.tools.list()).toEqual(['probe'])
    expect(seen[0]).toBeInstanceOf(FileReads)
    expect(seen[1]).toBeUndefined()
  })

  it('shows other packages what a session read, through run.fileReads', async () => {
    const { workspace } = folders()
    write(join(workspace, 'a.txt'), 'hello\n')
    const { root, call } = await boot(folders())
    const reads: FileReads[] = []
    root.tools.register(defineTool({
      name: 'probe', description: 'Sees the run.', parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: (_args, run: ToolRun) => {
        if (run.fileReads) reads.push(run.fileReads)
        return 'ok'
      },
    }))
    await call('read', { path: 'a.txt' })
    await root.tools.execute({ callId: 'p', name: 'probe', arguments: '{}', signal: new AbortController().signal, context: { sessionId: 'session-a' } })
    expect(reads[0]?.paths()).toEqual([join(workspace, 'a.txt')])
    expect(reads[0]?.get(join(workspace, 'a.txt'))).toEqual({
      size: 6, mtimeMs: expect.any(Number) as number, hash: '5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03',
    })
    // Forgetting a file makes the next write ask for a read again: checkpoints restoring a file need this.
    reads[0]?.forget(join(workspace, 'a.txt'))
    expect(codeOf(await call('write', { path: 'a.txt', content: 'x' }))).toBe('FILE_NOT_READ')
  })

  it('works in Config.workspaceRoot rather than the run\'s root', async () => {
    const { workspace, base } = folders()
    mkdirSync(join(base, 'elsewhere'))
    write(join(base, 'elsewhere', 'e.txt'), 'there\n')
    const { call } = await boot(folders(), { config: { workspaceRoot: join(base, 'elsewhere') } })
    expect(codeOf(await call('read', { path: 'e.txt' }, { workspaceRoot: workspace }))).toBe('ok')
    write(join(workspace, 'w.txt'), 'here\n')
    expect(codeOf(await call('read', { path: join(workspace, 'w.txt') }, { workspaceRoot: workspace }))).toBe('PATH_OUTSIDE_WORKSPACE')
  })

  it('rejects bad Config when the plugin loads', async () => {
    const root = new Context()
    await root.plugin(ToolRegistry)
    await expect((async () => { await root.plugin(toolFs, { readLines: 0 }) })()).rejects.toThrow(/readLines/)
  })
})

/** What the log keeps of a result, as presenters get it on replay: content and meta, as parsed JSON. */
function durableOf(result: ToolResult): DurableToolResult {
  const meta = result.isError ? undefined : result.meta
  return { isError: result.isError, content: result.content, ...(meta === undefined ? {} : { meta: JSON.parse(JSON.stringify(meta)) as JsonValue }) }
}

describe('presenters', () => {
  it('give read, diff and search cards from the durable result alone', async () => {
    const { workspace } = folders()
    write(join(workspace, 'a.txt'), 'one\ntwo\nthree\n')
    const { root, call } = await boot(folders())
    const durable = async (name: string, args: Record<string, unknown>) => {
      const result = await call(name, args)
      const card = root.tools.presentResult(name, JSON.stringify(args), durableOf(result))
      return { card, call: root.tools.presentCall(name, JSON.stringify(args)) }
    }
    expect(await durable('read', { path: 'a.txt', limit: 2 })).toEqual({
      call: { card: 'read', title: 'Read a.txt', path: 'a.txt', limit: 2 },
      card: { card: 'read', title: 'Read a.txt', path: 'a.txt', startLine: 1, lines: ['one', 'two'], totalLines: 3 },
    })
    expect(await durable('edit', { path: 'a.txt', old_string: 'two', new_string: 'TWO' })).toEqual({
      call: { card: 'diff', title: 'Edit a.txt', path: 'a.txt' },
      card: { card: 'diff', title: 'Edit a.txt', changes: [{ path: 'a.txt', before: 'one\ntwo\nthree', after: 'one\nTWO\nthree' }] },
    })
    expect(await durable('write', { path: 'b.txt', content: 'new\n' })).toEqual({
      call: { card: 'diff', title: 'Write b.txt', path: 'b.txt' },
      card: { card: 'diff', title: 'Write b.txt', changes: [{ path: 'b.txt', before: null, after: 'new\n' }] },
    })
    expect(await durable('grep', { pattern: 'TWO' })).toEqual({
      call: { card: 'search', title: 'Search TWO', query: 'TWO' },
      card: { card: 'search', title: 'Search TWO', matches: [{ path: 'a.txt', line: 2, text: 'TWO' }], total: 1, truncated: false },
    })
    expect(await durable('glob', { pattern: '*.txt' })).toEqual({
      call: { card: 'search', title: 'Find files *.txt', query: '*.txt' },
      card: { card: 'search', title: 'Find files *.txt', matches: [{ path: 'a.txt' }, { path: 'b.txt' }], total: 2, truncated: false },
    })
  })

  it('fall back to the generic card when the agent replaced the content with a spill preview', async () => {
    const { workspace } = folders()
    write(join(workspace, 'a.txt'), 'one\ntwo\n')
    const { root, call } = await boot(folders())
    const result = await call('read', { path: 'a.txt' })
    const preview = [{ type: 'text' as const, text: 'one\n[… 4 characters (1 line) left out. …]' }]
    const card = root.tools.presentResult('read', '{"path":"a.txt"}', { ...durableOf(result), content: preview })
    expect(card.card).toBe('generic')
  })
})

describe('loaded from a cordis.yml', () => {
  const packageDir = fileURLToPath(new URL('../', import.meta.url))
  let composition: Composition | undefined
  afterEach(async () => {
    await composition?.dispose()
    composition = undefined
  })

  it('loads by package name with its Config, runs a tool, and leaves when its row is removed', async () => {
    const { base, workspace } = folders()
    write(join(workspace, 'hello.txt'), 'hi\n')
    const file = join(base, 'cordis.yml')
    writeFileSync(file, [
      '- id: tools', "  name: '@rein/tools'", '  config:', '    askFor: []',
      '- id: fs', "  name: '@rein/tool-fs'", '  config:', '    readOnly: true', '    readLines: 5',
    ].join('\n'))
    composition = await loadComposition({ file, resolveFrom: packageDir })
    expect(composition.ctx.tools.list()).toEqual(['glob', 'grep', 'read'])
    const result = await composition.ctx.tools.execute({
      callId: 'c', name: 'read', arguments: '{"path":"hello.txt"}', signal: new AbortController().signal, context: { workspaceRoot: workspace },
    })
    expect(result).toMatchObject({ isError: false, content: [{ type: 'text', text: '1\thi' }] })
    expect(composition.ctx.tools.schemas().find((schema) => schema.name === 'read')?.description).toContain('Returns up to 5 lines')
    writeFileSync(file, ['- id: tools', "  name: '@rein/tools'"].join('\n'))
    await composition.reload()
    expect(composition.ctx.tools.list()).toEqual([])
  })

  it('fails loudly on a bad Config value, naming the row and the field', async () => {
    const { base } = folders()
    const file = join(base, 'cordis.yml')
    writeFileSync(file, ['- id: tools', "  name: '@rein/tools'", '- id: fs', "  name: '@rein/tool-fs'", '  config:', '    readOnly: sometimes'].join('\n'))
    const error = await loadComposition({ file, resolveFrom: packageDir }).then(() => undefined, (caught: unknown) => caught)
    expect(isReinError(error, 'CONFIG_INVALID')).toBe(true)
    expect((error as Error).message).toContain('row "fs" (@rein/tool-fs): config.readOnly')
  })

  it('fails the load on a workspaceRoot that is missing or no folder, rather than failing every call as a missing file', async () => {
    const { base, workspace } = folders()
    const file = join(base, 'cordis.yml')
    const aFile = join(workspace, 'plain.txt')
    write(aFile, 'x')
    for (const [root, said] of [[join(base, 'nowhere'), 'does not exist'], [aFile, 'is not a folder']] as const) {
      writeFileSync(file, ['- id: tools', "  name: '@rein/tools'", '- id: fs', "  name: '@rein/tool-fs'", '  config:', `    workspaceRoot: ${JSON.stringify(root)}`].join('\n'))
      const error = await loadComposition({ file, resolveFrom: packageDir }).then(() => undefined, (caught: unknown) => caught)
      expect(isReinError(error, 'CONFIG_INVALID')).toBe(true)
      expect((error as Error).message).toContain(`config.workspaceRoot: ${root} ${said}`)
    }
  })
})
