/** The `edit` and `multi_edit` tools: exact string replacements in a file the session has read. */

import type { FrozenJson } from '@rein/base'
import { defineTool, type ToolRun } from '@rein/tools'
import { applyEdits, type Edit } from './apply-edits.ts'
import { editedLines } from './diff-view.ts'
import { fsError } from './errors.ts'
import { changeCard, changeMeta, changeValue, checkTarget, recoverWrite, replaceText } from './file-change.ts'
import type { FsToolContext } from './tool-context.ts'
import { plural } from './write-tool.ts'

/** Lines of the edited text shown back to the model. */
const SHOWN_LINES = 30
const SHOWN_LINE_CHARS = 300

const oldString = {
  type: 'string',
  required: true,
  minLength: 1,
  description: 'The exact text to replace, as in the file: same indentation and line breaks, without read\'s line-number prefix.',
} as const
const newString = { type: 'string', required: true, description: 'The text to put in its place.' } as const
const replaceAll = { type: 'boolean', default: false, description: 'Replace every occurrence instead of exactly one.' } as const
const path = { type: 'string', required: true, minLength: 1, description: 'The file, relative to the workspace root or absolute.' } as const

export function createEditTool(context: FsToolContext) {
  return defineTool({
    name: 'edit',
    description: [
      'Replaces `old_string` with `new_string` in a file. `old_string` must match the file exactly, indentation and',
      'line breaks included (without the line numbers read shows), and match only one place unless `replace_all` is',
      'true. Read the file first. If it is not found, the error shows the nearest text. For several changes to one',
      'file use multi_edit; to create a file use write.',
    ].join(' '),
    parameters: { path, old_string: oldString, new_string: newString, replace_all: replaceAll },
    output: {
      schema: changeValue,
      render: (_args, value) => renderEdit(value),
      presentationMeta: (_args, value) => changeMeta(value),
    },
    effects: ['write'],
    recover: recoverWrite(context),
    execute: (args, run) => editFile(context, run, args.path, [args]),
    presentCall: (args) => ({ card: 'diff', title: `Edit ${args.path}`, path: args.path }),
    presentResult: (args, result) => changeCard(`Edit ${args.path}`, result),
    summarize: (args, result) => `edit ${args.path}${result.isError ? ' failed' : ''}`,
  })
}

export function createMultiEditTool(context: FsToolContext) {
  return defineTool({
    name: 'multi_edit',
    description: [
      'Makes several edits to one file at once, all or nothing. Edits apply in order, each to the result of the ones',
      'before it, with edit\'s rules (exact match, one place unless replace_all). If any edit fails, the file is left',
      'unchanged and the error names that edit. Read the file first.',
    ].join(' '),
    parameters: {
      path,
      edits: {
        type: 'array',
        required: true,
        minItems: 1,
        description: 'The edits, applied in order.',
        items: {
          type: 'object',
          additionalProperties: false,
          properties: { old_string: oldString, new_string: newString, replace_all: replaceAll },
        },
      },
    },
    output: {
      schema: changeValue,
      render: (_args, value) => renderEdit(value),
      presentationMeta: (_args, value) => changeMeta(value),
    },
    effects: ['write'],
    recover: recoverWrite(context),
    execute: (args, run) => editFile(context, run, args.path, args.edits),
    presentCall: (args) => ({ card: 'diff', title: `Edit ${args.path}`, path: args.path }),
    presentResult: (args, result) => changeCard(`Edit ${args.path}`, result),
    summarize: (args, result) => `multi_edit ${args.path} (${plural(args.edits.length, 'edit')})${result.isError ? ' failed' : ''}`,
  })
}

async function editFile(context: FsToolContext, run: ToolRun, file: string, edits: readonly Edit[]) {
  const target = await checkTarget(context, run, file)
  const { resolved, existing } = target
  if (!existing) throw fsError('FILE_NOT_FOUND', `${resolved.display} does not exist; use write to create a new file`, { path: resolved.display })
  const { text, replacements } = applyEdits(existing.text, edits, resolved.display)
  await replaceText(context, run, target, text)
  return { path: resolved.display, operation: 'update', before: existing.text, after: text, replacements } as const
}

type EditValue = FrozenJson<{ path: string; before: string | null; after: string; replacements?: number }>

function renderEdit(value: EditValue): string {
  const head = `Edited ${value.path} (${plural(value.replacements ?? 1, 'replacement')}).`
  const { text, omitted } = editedLines(value.before ?? '', value.after, SHOWN_LINES, SHOWN_LINE_CHARS)
  if (text === '') return head
  const more = omitted > 0 ? `\n[… ${plural(omitted, 'more changed line')} not shown; read the file to see them.]` : ''
  return `${head} The changed part now reads:\n${text}${more}`
}
