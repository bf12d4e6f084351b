/** The `grep` tool: a regular expression over files, matching lines grouped by file, capped. */

import { stat } from 'node:fs/promises'
import { defineTool, type DurableToolResult, type ToolResultView } from '@rein/tools'
import { fromSystemError, fsError } from './errors.ts'
import { displayOf } from './glob-tool.ts'
import { Matcher } from './matcher.ts'
import { compilePattern, searchFiles, type SearchOutcome } from './search.ts'
import { callScope, type FsToolContext } from './tool-context.ts'
import { checkPattern, relativeToFolder, walkFiles } from './walk.ts'
import { notFound, resolvePath, type Resolved, type Scope } from './workspace.ts'
import { plural } from './write-tool.ts'
import { cutHead, listedPath } from '@rein/base'

/** A matching line longer than this is shown around its first match. */
const LINE_CHARS = 240
/** Matches kept in the log for the search card, and their text's length. */
const CARD_MATCHES = 50
const CARD_TEXT = 200

const grepValue = {
  type: 'object',
  additionalProperties: false,
  properties: {
    pattern: { type: 'string', required: true },
    path: { type: 'string', required: true },
    files: {
      type: 'array',
      required: true,
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          path: { type: 'string', required: true },
          matches: {
            type: 'array',
            required: true,
            items: {
              type: 'object',
              additionalProperties: false,
              properties: { line: { type: 'integer', required: true }, text: { type: 'string', required: true } },
            },
          },
        },
      },
    },
    matches: { type: 'integer', required: true, description: 'matching lines shown' },
    searched: { type: 'integer', required: true, description: 'text files read' },
    // Optional: results logged before these were added lack them.
    binary: { type: 'integer', description: 'binary files found and not searched' },
    binaryFile: { type: 'boolean', description: '`path` is one file, and it is binary: nothing was searched' },
    truncated: { type: 'boolean', required: true, description: 'more matching lines exist than are shown' },
  },
} as const

export function createGrepTool(context: FsToolContext) {
  const { config } = context
  return defineTool({
    name: 'grep',
    description: [
      'Searches file contents for a regular expression (JavaScript syntax; start it with `(?i)` to ignore case) and',
      'lists the matching lines grouped by file, as `<line number>: <text>`. `path` narrows the search to a folder or',
      'one file (default: the workspace root); `glob` keeps only files whose names match, e.g. `*.ts` (any depth) or',
      `\`src/**/*.{js,jsx}\`. Skips binary files, the .git folder${config.gitignore ? ' and files .gitignore ignores' : ''}.`,
      `At most ${config.grepMatches} matching lines; the last line says when there were more. To find files by name, use glob.`,
    ].join(' '),
    parameters: {
      pattern: { type: 'string', required: true, minLength: 1, description: 'The regular expression, matched against each line.' },
      path: { type: 'string', minLength: 1, description: 'A folder or file to search. Default: the workspace root.' },
      glob: { type: 'string', minLength: 1, description: 'Search only files whose path matches this glob; without a "/" it matches names at any depth.' },
    },
    output: {
      schema: grepValue,
      render: (_args, value) => renderGrep(value),
      presentationMeta: (_args, value) => ({
        matches: value.files.flatMap((file) => file.matches.map((match) => ({ path: file.path, line: match.line, text: cutHead(match.text, CARD_TEXT) }))).slice(0, CARD_MATCHES),
        total: value.matches,
        truncated: value.truncated || value.matches > CARD_MATCHES,
      }),
    },
    effects: ['read'],
    isConcurrencySafe: true,
    execute: async (args, run) => {
      const regex = compilePattern(args.pattern)
      const scope = await callScope(context, run)
      const resolved = await resolvePath(scope, args.path ?? '.', 'read')
      if (!resolved.exists) throw await notFound(resolved)
      const info = await stat(resolved.real).catch((error: unknown) => { throw fromSystemError(error, 'read', resolved.display) })
      if (!info.isFile() && !info.isDirectory()) throw fsError('NOT_A_REGULAR_FILE', `${resolved.display} is neither a file nor a folder`, { path: resolved.display })
      const display = (file: string) => info.isFile() ? resolved.display : displayOf(resolved, file)
      const pattern = info.isFile() ? undefined : fileGlob(args.glob, resolved, scope)
      // Started before the walk, so the thread is up by the time the first file is read.
      const matcher = new Matcher(regex, { timeoutMs: config.grepTimeoutMs, signal: run.signal })
      try {
        const files = pattern === undefined ? [resolved.real]
          : await walkFiles({ root: resolved.allowed, start: resolved.real, patterns: [pattern], gitignore: config.gitignore, signal: run.signal })
        const outcome = await searchFiles({ matcher, files, allowed: resolved.allowed, maxMatches: config.grepMatches, lineChars: LINE_CHARS, display, signal: run.signal })
        const { shown, count, cut } = withinBudget(outcome, config.outputChars - 300, display)
        return {
          pattern: args.pattern,
          path: resolved.display,
          files: shown,
          matches: count,
          searched: outcome.searched,
          binary: outcome.binary,
          binaryFile: info.isFile() && outcome.binary === 1,
          truncated: outcome.truncated || cut,
        }
      } finally {
        await matcher.close()
      }
    },
    presentCall: (args) => ({ card: 'search', title: `Search ${args.pattern}`, query: args.pattern, ...(args.path ? { path: args.path } : {}) }),
    presentResult: (args, result) => grepCard(`Search ${args.pattern}`, result),
    summarize: (args, result) => `grep ${args.pattern}${result.isError ? ' failed' : ''}`,
  })
}

/** A `glob` argument as a pattern from the search folder: a bare name matches at any depth, as in ripgrep. */
function fileGlob(glob: string | undefined, folder: Resolved, scope: Scope): string {
  if (glob === undefined) return '**/*'
  const relative = relativeToFolder(glob, folder, scope, 'glob')
  checkPattern(relative, 'glob')
  return relative.includes('/') ? relative : `**/${relative}`
}

/** The files and lines that fit in `chars` of rendered text. */
function withinBudget(outcome: SearchOutcome, chars: number, display: (file: string) => string) {
  const shown: { path: string; matches: { line: number; text: string }[] }[] = []
  let used = 0
  let count = 0
  let cut = false
  for (const { file, matches } of outcome.found) {
    const path = display(file)
    used += path.length + 2
    const kept: { line: number; text: string }[] = []
    for (const match of matches) {
      const cost = String(match.line).length + match.text.length + 3
      if (used + cost > chars && count > 0) {
        cut = true
        break
      }
      used += cost
      kept.push(match)
      count++
    }
    if (kept.length > 0) shown.push({ path, matches: kept })
    if (cut) break
  }
  return { shown, count, cut }
}

interface GrepValue {
  readonly pattern: string
  readonly path: string
  readonly files: readonly { readonly path: string; readonly matches: readonly { readonly line: number; readonly text: string }[] }[]
  readonly matches: number
  readonly searched: number
  readonly binary?: number
  readonly binaryFile?: boolean
  readonly truncated: boolean
}

function renderGrep(value: GrepValue): string {
  const where = value.path === '.' ? '' : ` in ${value.path}`
  // "No matches" alone would tell the model the pattern is not in a file grep never looked into.
  if (value.binaryFile === true) {
    return `[${listedPath(value.path)} is a binary file, so grep did not search it: grep and read show text files only. To look inside it, run a command such as strings or xxd, if you can run commands.]`
  }
  const binary = value.binary ?? 0
  const skipped = binary > 0 ? `; ${plural(binary, 'binary file')} not searched: grep searches text files only` : ''
  if (value.matches === 0) return `No matches for ${value.pattern}${where} (${plural(value.searched, 'file')} searched${skipped}).`
  const blocks = value.files.map((file) => `${listedPath(file.path)}\n${file.matches.map((match) => `${match.line}: ${match.text}`).join('\n')}`)
  const note = value.truncated
    ? `\n[Showing the first ${plural(value.matches, 'matching line')} in ${plural(value.files.length, 'file')}; there are more. Narrow the pattern, path or glob to see them.]`
    : ''
  return blocks.join('\n\n') + note
}

function grepCard(title: string, result: DurableToolResult): ToolResultView | undefined {
  const meta = result.meta
  if (result.isError || typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined
  const { matches, total, truncated } = meta
  if (!Array.isArray(matches) || typeof total !== 'number' || typeof truncated !== 'boolean') return undefined
  const out: { path: string; line: number; text: string }[] = []
  for (const match of matches) {
    if (typeof match !== 'object' || match === null || Array.isArray(match)) return undefined
    const { path, line, text } = match
    if (typeof path !== 'string' || typeof line !== 'number' || typeof text !== 'string') return undefined
    out.push({ path, line, text })
  }
  return { card: 'search', title, matches: out, total, truncated }
}
