/**
 * Checks a presenter's card against the unions in presentation.ts and returns a plain copy of it,
 * or says what is wrong. The copy holds only the declared fields, read once, so what reaches a UI
 * is plain data: no getters, cycles or extra fields from the presenter's object.
 */

import type { ToolCallView, ToolResultView } from './presentation.ts'

type Field = 'string' | 'number' | 'boolean' | 'kind' | 'stopped' | 'string-or-null' | 'number-or-null' | 'strings' | 'changes' | 'matches'
/** A field and whether it may be left out. */
type Shape = Record<string, [Field, boolean]>

const CALL_CARDS: Record<string, Shape> = {
  generic: { title: ['string', false], kind: ['kind', true], detail: ['string', true] },
  terminal: { title: ['string', false], command: ['string', false], cwd: ['string', true] },
  diff: { title: ['string', false], path: ['string', false] },
  read: { title: ['string', false], path: ['string', false], offset: ['number', true], limit: ['number', true] },
  search: { title: ['string', false], query: ['string', false], path: ['string', true] },
}
const RESULT_CARDS: Record<string, Shape> = {
  generic: { title: ['string', true], text: ['string', true] },
  terminal: {
    title: ['string', true], output: ['string', false], exitCode: ['number-or-null', true],
    signal: ['string-or-null', true], truncated: ['boolean', true], stopped: ['stopped', true],
  },
  diff: { title: ['string', true], changes: ['changes', false] },
  read: { title: ['string', true], path: ['string', false], startLine: ['number', false], lines: ['strings', false], totalLines: ['number', true] },
  search: { title: ['string', true], matches: ['matches', false], total: ['number', false], truncated: ['boolean', false] },
}
const KINDS = new Set(['read', 'edit', 'delete', 'move', 'search', 'execute', 'fetch', 'other'])
const STOPPED = new Set(['cancelled', 'timed-out'])
const CHANGE: Shape = { path: ['string', false], before: ['string-or-null', false], after: ['string-or-null', false] }
const MATCH: Shape = { path: ['string', false], line: ['number', true], text: ['string', true] }

/** A plain copy of a valid call card, or what is wrong with it. May throw (a getter, a proxy): callers contain that. */
export function checkCallView(value: unknown): { view: ToolCallView } | { problem: string } {
  const checked = checkCard(value, CALL_CARDS)
  return typeof checked === 'string' ? { problem: checked } : { view: checked as ToolCallView }
}

/** A plain copy of a valid result card, or what is wrong with it. May throw: callers contain that. */
export function checkResultView(value: unknown): { view: ToolResultView } | { problem: string } {
  const checked = checkCard(value, RESULT_CARDS)
  return typeof checked === 'string' ? { problem: checked } : { view: checked as ToolResultView }
}

function checkCard(value: unknown, cards: Record<string, Shape>): Record<string, unknown> | string {
  if (!isPlainObject(value)) return `it returned ${describe(value)}, not a card`
  const kind = value.card
  if (typeof kind !== 'string' || !Object.hasOwn(cards, kind)) {
    const named = typeof kind === 'string' ? JSON.stringify(kind) : describe(kind)
    return `it returned a card of unknown kind ${named} (known: ${Object.keys(cards).join(', ')})`
  }
  return copyShape(value, cards[kind]!, `the ${kind} card`, { card: kind })
}

/** What is wrong with a field; a class so it cannot be mistaken for a copied value. */
class Problem {
  constructor(readonly message: string) {}
}

/** Copies the fields of `shape` from `value` into `into`, or says which field is wrong. */
function copyShape(value: Record<string, unknown>, shape: Shape, where: string, into: Record<string, unknown> = {}): Record<string, unknown> | string {
  for (const key of Object.keys(value)) {
    if (key !== 'card' && !Object.hasOwn(shape, key)) return `${where} has a field "${key}" it does not declare`
  }
  for (const [key, [field, optional]] of Object.entries(shape)) {
    const item = value[key]
    if (item === undefined) {
      if (optional) continue
      return `${where} is missing "${key}"`
    }
    const copied = copyField(item, field, `${where}'s ${key}`)
    if (copied instanceof Problem) return copied.message
    into[key] = copied
  }
  return into
}

function copyField(value: unknown, field: Field, where: string): unknown {
  const wrong = new Problem(`${where} must be ${FIELD_NAMES[field]}, not ${describe(value)}`)
  switch (field) {
    case 'string': return typeof value === 'string' ? value : wrong
    case 'number': return typeof value === 'number' && Number.isFinite(value) ? value : wrong
    case 'boolean': return typeof value === 'boolean' ? value : wrong
    case 'kind': return typeof value === 'string' && KINDS.has(value) ? value : wrong
    case 'stopped': return typeof value === 'string' && STOPPED.has(value) ? value : wrong
    case 'string-or-null': return value === null || typeof value === 'string' ? value : wrong
    case 'number-or-null': return value === null || (typeof value === 'number' && Number.isFinite(value)) ? value : wrong
    case 'strings': return Array.isArray(value) && value.every((line) => typeof line === 'string') ? [...value] as string[] : wrong
    case 'changes':
    case 'matches': {
      if (!Array.isArray(value)) return wrong
      const shape = field === 'changes' ? CHANGE : MATCH
      const out: Record<string, unknown>[] = []
      for (const [i, item] of value.entries()) {
        if (!isPlainObject(item)) return new Problem(`${where}[${i}] must be an object, not ${describe(item)}`)
        const copied = copyShape(item, shape, `${where}[${i}]`)
        if (typeof copied === 'string') return new Problem(copied)
        out.push(copied)
      }
      return out
    }
  }
}

const FIELD_NAMES: Record<Field, string> = {
  string: 'a string', number: 'a finite number', boolean: 'a boolean', kind: `one of ${[...KINDS].join(', ')}`, stopped: `one of ${[...STOPPED].join(', ')}`,
  'string-or-null': 'a string or null', 'number-or-null': 'a number or null', strings: 'an array of strings',
  changes: 'an array of {path, before, after}', matches: 'an array of {path, line?, text?}',
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'object') return typeof (value as { then?: unknown }).then === 'function' ? 'a promise' : 'an object'
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return `${typeof value} ${String(value)}`
  return typeof value
}
