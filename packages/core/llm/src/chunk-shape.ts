/**
 * What is wrong with a chunk an adapter yielded, if anything. Adapters are plugins, often plain
 * JavaScript: a chunk the types did not hold would otherwise throw a TypeError deep in the runtime,
 * be taken for a network fault and retried, or reach the log as a block no load accepts. Checked
 * once per chunk, so only what the runtime and the assembler read: types and the fields they use.
 */

import { kindOf, toFrozenJson } from '@rein/base'
import { isFailureCode } from './errors.ts'

const BLOCK_TYPES: ReadonlySet<unknown> = new Set(['text', 'reasoning', 'tool-call'])
const FINISH_REASONS: ReadonlySet<unknown> = new Set(['stop', 'tool-calls', 'max-tokens', 'aborted', 'error'])

type Fields = Record<string, unknown>

const isIndex = (value: unknown): boolean => Number.isInteger(value) && (value as number) >= 0

/** A short description of what is wrong with `chunk`, or undefined for a chunk the runtime can take. */
export function chunkProblem(chunk: unknown): string | undefined {
  if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) return `${kindOf(chunk)} where a stream chunk belongs`
  const fields = chunk as Fields
  switch (fields.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return indexProblem(fields) ?? (typeof fields.text === 'string' ? undefined : `a ${fields.type} chunk whose text is not a string`)
    case 'tool-call-delta':
      return indexProblem(fields) ?? toolDeltaProblem(fields)
    case 'block-start':
      return indexProblem(fields) ?? (BLOCK_TYPES.has(fields.blockType) ? undefined : 'a block-start chunk whose blockType is not text, reasoning or tool-call')
    case 'block-end':
      return indexProblem(fields) ?? blockProblem(fields.block)
    case 'finish':
      return finishProblem(fields)
    case 'usage':
    case 'discard':
      // Usage that is no usage is dropped (`checkedUsage`); a discard is the runtime's and is skipped.
      return undefined
    default:
      return `a chunk of type ${typeof fields.type === 'string' ? JSON.stringify(fields.type.slice(0, 40)) : kindOf(fields.type)}, which no stream has`
  }
}

function indexProblem(fields: Fields): string | undefined {
  return isIndex(fields.index) ? undefined : `a ${String(fields.type)} chunk whose index is not a whole number of 0 or more`
}

function toolDeltaProblem(fields: Fields): string | undefined {
  if (typeof fields.id !== 'string') return 'a tool-call-delta chunk whose id is not a string'
  if (fields.name !== undefined && typeof fields.name !== 'string') return 'a tool-call-delta chunk whose name is not a string'
  return typeof fields.argumentsDelta === 'string' ? undefined : 'a tool-call-delta chunk whose argumentsDelta is not a string'
}

/** A block a stream ends with: text or reasoning with its text, or a tool call with its id, name and arguments. */
function blockProblem(block: unknown): string | undefined {
  if (typeof block !== 'object' || block === null) return `a block-end chunk whose block is ${kindOf(block)}`
  const fields = block as Fields
  if (fields.type === 'text' || fields.type === 'reasoning') {
    return typeof fields.text === 'string' ? undefined : `a block-end chunk whose ${fields.type} block has no string text`
  }
  if (fields.type !== 'tool-call') return 'a block-end chunk whose block is not text, reasoning or a tool call'
  const ok = typeof fields.id === 'string' && typeof fields.name === 'string' && typeof fields.arguments === 'string'
  return ok ? undefined : 'a block-end chunk whose tool call lacks a string id, name or arguments'
}

/** A finish: its reason, its failure, and what the attempt record and the message keep of it. */
function finishProblem(fields: Fields): string | undefined {
  if (!FINISH_REASONS.has(fields.reason)) return 'a finish chunk whose reason is not stop, tool-calls, max-tokens, aborted or error'
  const { failure, responseId, responseModel, replayState } = fields
  if (failure !== undefined) {
    const { code, message } = (typeof failure === 'object' && failure !== null ? failure : {}) as Fields
    if (!isFailureCode(code) || typeof message !== 'string') return 'a finish chunk whose failure is not {code, message} with a failure code of the seam'
  }
  if (responseId !== undefined && typeof responseId !== 'string') return 'a finish chunk whose responseId is not a string'
  if (responseModel !== undefined && typeof responseModel !== 'string') return 'a finish chunk whose responseModel is not a string'
  return replayState === undefined || isJson(replayState) ? undefined : 'a finish chunk whose replayState is not JSON'
}

/** Once per attempt, at its finish: the state is stored with the message, which only JSON can be. */
function isJson(value: unknown): boolean {
  try {
    toFrozenJson(value)
    return true
  } catch {
    return false
  }
}
