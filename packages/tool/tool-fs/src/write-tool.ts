/** The `write` tool: creates a file, or replaces all of one the session has read. */

import { defineTool } from '@rein/tools'
import { countLines } from '@rein/base'
import { changeCard, changeMeta, changeValue, checkTarget, recoverWrite, replaceText } from './file-change.ts'
import { formatBytes } from './text-file.ts'
import type { FsToolContext } from './tool-context.ts'

export function createWriteTool(context: FsToolContext) {
  return defineTool({
    name: 'write',
    description: [
      'Creates a file with `content`, or replaces everything in an existing one; missing parent folders are created.',
      'To change part of a file, use edit instead. An existing file must have been read in this conversation first,',
      `and not changed since. ${sizeLimit(context)}`,
    ].join(' '),
    parameters: {
      path: { type: 'string', required: true, minLength: 1, description: 'The file, relative to the workspace root or absolute.' },
      content: { type: 'string', required: true, description: 'The whole new content of the file.' },
    },
    output: {
      schema: changeValue,
      render: (_args, value) => value.before === null
        ? `Created ${value.path} (${plural(countLines(value.after), 'line')}).`
        : `Replaced the content of ${value.path}: ${plural(countLines(value.after), 'line')} (it had ${countLines(value.before)}).`,
      presentationMeta: (_args, value) => changeMeta(value),
    },
    effects: ['write'],
    recover: recoverWrite(context),
    execute: async (args, run) => {
      const target = await checkTarget(context, run, args.path)
      await replaceText(context, run, target, args.content)
      return {
        path: target.resolved.display,
        operation: target.existing ? 'update' : 'create',
        before: target.existing?.text ?? null,
        after: args.content,
      } as const
    },
    presentCall: (args) => ({ card: 'diff', title: `Write ${args.path}`, path: args.path }),
    presentResult: (args, result) => changeCard(`Write ${args.path}`, result),
    summarize: (args, result) => `write ${args.path}${result.isError ? ' failed' : ''}`,
  })
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`
}

/** The largest file `write` can make, and when the registry's argument limit is the lower bound, how to write a longer one. */
function sizeLimit({ config, maxArgumentBytes }: FsToolContext): string {
  if (maxArgumentBytes === undefined || maxArgumentBytes >= config.maxFileBytes) return `Text files up to ${formatBytes(config.maxFileBytes)}.`
  return `A call's arguments (path and content, as JSON) may hold up to ${formatBytes(maxArgumentBytes)}: write a longer file in parts, the start with write and the rest with edit.`
}
