/** The `glob` tool: files by name pattern, sorted, capped, `.gitignore` respected. */

import { stat } from 'node:fs/promises'
import { relative } from 'node:path'
import { listedPath } from '@rein/base'
import { defineTool, type DurableToolResult, type ToolResultView } from '@rein/tools'
import { fromSystemError, fsError } from './errors.ts'
import { callScope, type FsToolContext } from './tool-context.ts'
import { checkPattern, relativeToFolder, walkFiles } from './walk.ts'
import { notFound, resolvePath, type Resolved } from './workspace.ts'

/** Paths kept in the log for the search card. */
const CARD_PATHS = 100

export function createGlobTool(context: FsToolContext) {
  const { config } = context
  return defineTool({
    name: 'glob',
    description: [
      'Finds files by name: `pattern` is a glob such as `**/*.ts`, `src/**/*.{js,jsx}` or `docs/*.md`, matched',
      'under `path` (default: the workspace root). Returns paths relative to the workspace root, sorted, at most',
      `${config.globLimit}; the last line says when there were more. Skips the .git folder${config.gitignore ? ', files .gitignore ignores,' : ''}`,
      'and symbolic links. To search inside files, use grep.',
    ].join(' '),
    parameters: {
      pattern: { type: 'string', required: true, minLength: 1, description: 'A glob, relative to path: `*` within a name, `**` across folders, `{a,b}` alternatives.' },
      path: { type: 'string', minLength: 1, description: 'The folder to search under. Default: the workspace root.' },
    },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          pattern: { type: 'string', required: true },
          path: { type: 'string', required: true },
          files: { type: 'array', items: { type: 'string' }, required: true },
          total: { type: 'integer', required: true, description: 'files that matched, shown or not' },
          truncated: { type: 'boolean', required: true },
        },
      },
      render: (_args, value) => {
        const where = value.path === '.' ? '' : ` under ${value.path}`
        if (value.total === 0) return `No files match ${value.pattern}${where}.`
        const note = value.truncated ? `\n[${value.files.length} of ${value.total} matching files shown. Narrow the pattern or the path to see the rest.]` : ''
        return value.files.map(listedPath).join('\n') + note
      },
      presentationMeta: (_args, value) => ({ paths: value.files.slice(0, CARD_PATHS), total: value.total, truncated: value.truncated || value.files.length > CARD_PATHS }),
    },
    effects: ['read'],
    isConcurrencySafe: true,
    execute: async (args, run) => {
      const scope = await callScope(context, run)
      const folder = await folderOf(await resolvePath(scope, args.path ?? '.', 'read'))
      const pattern = relativeToFolder(args.pattern, folder, scope, 'pattern')
      checkPattern(pattern, 'pattern')
      const files = await walkFiles({ root: folder.allowed, start: folder.real, patterns: [pattern], gitignore: config.gitignore, signal: run.signal })
      const shown: string[] = []
      let chars = 0
      for (const file of files) {
        const display = displayOf(folder, file)
        if (shown.length >= config.globLimit || chars + display.length + 1 > config.outputChars - 200) break
        shown.push(display)
        chars += display.length + 1
      }
      return { pattern: args.pattern, path: folder.display, files: shown, total: files.length, truncated: shown.length < files.length }
    },
    presentCall: (args) => ({ card: 'search', title: `Find files ${args.pattern}`, query: args.pattern, ...(args.path ? { path: args.path } : {}) }),
    presentResult: (args, result) => searchCard(`Find files ${args.pattern}`, result),
    summarize: (args, result) => `glob ${args.pattern}${result.isError ? ' failed' : ''}`,
  })
}

/** A found file as the model is shown it: relative to the root, or absolute in the spill folder. */
export function displayOf(base: Resolved, file: string): string {
  return base.area === 'spill' ? file : relative(base.allowed, file)
}

/** A resolved path that must be an existing folder. */
async function folderOf(resolved: Resolved): Promise<Resolved> {
  if (!resolved.exists) throw await notFound(resolved)
  const info = await stat(resolved.real).catch((error: unknown) => { throw fromSystemError(error, 'read', resolved.display) })
  if (!info.isDirectory()) {
    throw fsError('NOT_A_REGULAR_FILE', `${resolved.display} is a file, not a folder; give glob a folder as path`, { path: resolved.display })
  }
  return resolved
}

function searchCard(title: string, result: DurableToolResult): ToolResultView | undefined {
  const meta = result.meta
  if (result.isError || typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined
  const { paths, total, truncated } = meta
  if (!Array.isArray(paths) || typeof total !== 'number' || typeof truncated !== 'boolean') return undefined
  const matches = paths.filter((path): path is string => typeof path === 'string').map((path) => ({ path }))
  return { card: 'search', title, matches, total, truncated }
}
