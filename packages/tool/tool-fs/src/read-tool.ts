/** The `read` tool: a numbered window of a text file, with a footer saying how to read on. */

import { counted, groupDigits } from '@rein/base'
import { defineTool, type DurableToolResult } from '@rein/tools'
import { CUT_MARK, readLineWindow } from './line-window.ts'
import { openRegularFile } from './open-file.ts'
import { formatBytes } from './text-file.ts'
import { callScope, readsOf, type FsToolContext } from './tool-context.ts'
import { notFound, resolvePath } from './workspace.ts'

/** Room kept under `outputChars` for the notes after the lines. */
const NOTES_CHARS = 400

const readValue = {
  type: 'object',
  additionalProperties: false,
  properties: {
    path: { type: 'string', required: true },
    binary: { type: 'boolean', required: true },
    size: { type: 'integer', required: true, description: 'bytes' },
    startLine: { type: 'integer', required: true },
    lines: { type: 'array', items: { type: 'string' }, required: true },
    totalLines: { type: 'integer', required: true },
    cut: { type: 'array', items: { type: 'integer' }, required: true, description: 'numbers of lines cut at lineChars' },
    invalidUtf8: { type: 'boolean', required: true },
  },
} as const

export function createReadTool(context: FsToolContext) {
  const { config } = context
  return defineTool({
    name: 'read',
    description: [
      'Reads a text file and returns its lines numbered from 1, as `<number><tab><line>`; the numbers are not part of the file.',
      `Returns up to ${config.readLines} lines from \`offset\` (default 1); when there is more, the last line says which offset to read on from.`,
      `Lines longer than ${config.lineChars} characters are cut. Binary files are not shown.`,
      'Read a file before you edit or overwrite it. `path` is relative to the workspace root or absolute inside it;',
      'you may also read a file that a shortened tool result says the whole output was saved to.',
    ].join(' '),
    parameters: {
      path: { type: 'string', required: true, minLength: 1, description: 'The file, relative to the workspace root or absolute.' },
      offset: { type: 'integer', minimum: 1, description: 'The first line to return, counting from 1. Default 1.' },
      limit: { type: 'integer', minimum: 1, description: `How many lines to return at most. Default ${config.readLines}.` },
    },
    output: {
      schema: readValue,
      render: (_args, value) => renderRead(value, config.lineChars),
      presentationMeta: (_args, value) => ({ path: value.path, startLine: value.startLine, count: value.lines.length, totalLines: value.totalLines }),
    },
    effects: ['read'],
    isConcurrencySafe: true,
    execute: async (args, run) => {
      const scope = await callScope(context, run)
      const resolved = await resolvePath(scope, args.path, 'read')
      if (!resolved.exists) throw await notFound(resolved)
      const { handle, stat } = await openRegularFile(resolved, resolved.allowed)
      const offset = args.offset ?? 1
      let window
      try {
        window = await readLineWindow(handle, {
          offset,
          limit: args.limit ?? config.readLines,
          lineChars: config.lineChars,
          chars: Math.max(1, config.outputChars - NOTES_CHARS),
          signal: run.signal,
        })
      } finally {
        await handle.close()
      }
      // Only what may be written later is tracked: a workspace text file.
      if (!window.binary && resolved.area === 'workspace') {
        readsOf(context, run).record(resolved.real, { size: window.bytes, mtimeMs: stat.mtimeMs, hash: window.hash })
      }
      return {
        path: resolved.display,
        binary: window.binary,
        size: stat.size,
        startLine: offset,
        lines: window.lines,
        totalLines: window.totalLines,
        cut: window.cut,
        invalidUtf8: window.invalidUtf8,
      }
    },
    presentCall: (args) => ({
      card: 'read',
      title: `Read ${args.path}`,
      path: args.path,
      ...(args.offset === undefined ? {} : { offset: args.offset }),
      ...(args.limit === undefined ? {} : { limit: args.limit }),
    }),
    presentResult: (args, result) => readCard(args.path, result),
    summarize: (args, result) => {
      const meta = readMeta(result)
      if (result.isError || !meta) return `read ${args.path} failed`
      if (meta.count === 0) return `read ${meta.path} (nothing shown)`
      return `read ${meta.path}: lines ${meta.startLine}-${meta.startLine + meta.count - 1} of ${meta.totalLines}`
    },
  })
}

interface ReadValue {
  readonly path: string
  readonly binary: boolean
  readonly size: number
  readonly startLine: number
  readonly lines: readonly string[]
  readonly totalLines: number
  readonly cut: readonly number[]
  readonly invalidUtf8: boolean
}

function renderRead(value: ReadValue, lineChars: number): string {
  const { path, startLine, lines, totalLines } = value
  if (value.binary) return `[${path} is a binary file (${formatBytes(value.size)}); read shows text files only.]`
  if (totalLines === 0) return `[${path} is empty.]`
  if (lines.length === 0) return `[${path} has ${counted(totalLines, 'line')}; offset ${groupDigits(startLine)} is past the end.]`
  const cut = new Set(value.cut)
  const out = lines.map((line, i) => `${startLine + i}\t${line}${cut.has(startLine + i) ? CUT_MARK : ''}`)
  if (value.invalidUtf8) out.push('[Some bytes here are not valid UTF-8 and show as �; edit and write cannot change this file.]')
  if (cut.size > 0) out.push(`[${cut.size === 1 ? '1 line is' : `${cut.size} lines are`} longer than ${lineChars} characters and ${cut.size === 1 ? 'was' : 'were'} cut; grep finds text anywhere in a line.]`)
  const end = startLine + lines.length - 1
  if (end < totalLines) out.push(`[Lines ${startLine}-${end} of ${totalLines}. To read on, call read with offset ${end + 1}.]`)
  return out.join('\n')
}

interface ReadMeta {
  path: string
  startLine: number
  count: number
  totalLines: number
}

function readMeta(result: DurableToolResult): ReadMeta | undefined {
  const meta = result.meta
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined
  const { path, startLine, count, totalLines } = meta
  if (typeof path !== 'string' || typeof startLine !== 'number' || typeof count !== 'number' || typeof totalLines !== 'number') return undefined
  return { path, startLine, count, totalLines }
}

/** The read card, its lines taken back from the numbered text; none when the text is not ours (a spill preview). */
function readCard(path: string, result: DurableToolResult) {
  const meta = readMeta(result)
  const first = result.content[0]
  if (result.isError || !meta || meta.count === 0 || first?.type !== 'text') return undefined
  const rows = first.text.split('\n', meta.count)
  const lines: string[] = []
  for (const [i, row] of rows.entries()) {
    const prefix = `${meta.startLine + i}\t`
    if (!row.startsWith(prefix)) return undefined
    lines.push(row.slice(prefix.length))
  }
  if (lines.length !== meta.count) return undefined
  return { card: 'read' as const, title: `Read ${path}`, path: meta.path, startLine: meta.startLine, lines, totalLines: meta.totalLines }
}
