/**
 * The shape every reader of a loaded log relies on, per core event type: the fields the message
 * projection, the repair plan, the summary and a resume read, with their types. A stored line can
 * be valid JSON with a valid envelope and still not have it (a flipped byte in a key); such a log
 * is refused as corrupt rather than loaded and crashing the first reader with a TypeError. Fields
 * newer than the oldest logs are optional; unknown fields are kept.
 */

import type { SessionEvent } from './events.ts'
import { ReinError } from '@rein/base'

type Check = (value: unknown) => string | undefined
type Fields = Readonly<Record<string, Check>>

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

const string: Check = (value) => (typeof value === 'string' ? undefined : 'a string')
const boolean: Check = (value) => (typeof value === 'boolean' ? undefined : 'true or false')
const count: Check = (value) => (Number.isSafeInteger(value) && (value as number) >= 0 ? undefined : 'a whole number ≥ 0')
const number: Check = (value) => (typeof value === 'number' && Number.isFinite(value) ? undefined : 'a number')
const optional = (check: Check): Check => (value) => (value === undefined ? undefined : check(value))
/** One of `values`, exactly. */
const oneOf = (...values: readonly string[]): Check => (value) => (values.includes(value as string) ? undefined : values.map((each) => `"${each}"`).join(' or '))

/** An object with `fields` (each checked; a problem names its path). */
function object(fields: Fields): Check {
  // Indexed loops, not for…of over entries: a resume checks every event of the log.
  const keys = Object.keys(fields)
  const checks = Object.values(fields)
  return (value) => {
    if (!isRecord(value)) return 'an object'
    for (let i = 0; i < keys.length; i++) {
      const problem = checks[i]!(value[keys[i]!])
      if (problem !== undefined) return problem.startsWith('.') || problem.startsWith('[') ? `.${keys[i]}${problem}` : `.${keys[i]}: ${problem}`
    }
    return undefined
  }
}

function list(item: Check): Check {
  return (value) => {
    if (!Array.isArray(value)) return 'a list'
    for (let index = 0; index < value.length; index++) {
      const problem = item(value[index])
      if (problem !== undefined) return problem.startsWith('.') ? `[${index}]${problem}` : `[${index}]: ${problem}`
    }
    return undefined
  }
}

/** One of several object shapes, chosen by its `type`. */
function byType(shapes: Readonly<Record<string, Check>>): Check {
  const byName = shapeMap(shapes)
  return (value) => {
    if (!isRecord(value) || typeof value.type !== 'string') return 'an object with a "type"'
    const shape = byName.get(value.type)
    return shape ? shape(value) : `a known type, not "${value.type}"`
  }
}

/**
 * A Map, not the object's keys: a type read from JSON is a fresh string, which a keyed property
 * lookup must first intern, and a resume looks up every event's.
 */
function shapeMap(shapes: Readonly<Record<string, Check>>): ReadonlyMap<string, Check> {
  return new Map(Object.entries(shapes))
}

const text = object({ text: string })
const image = object({ mediaType: string, url: string })
const resultContent = list(byType({ text, image }))
/** A message whose role is one of `roles`: an answer read back as the person's would mislead the model. */
const message = (...roles: readonly string[]) => object({
  id: string,
  role: oneOf(...roles),
  content: list(byType({
    text,
    reasoning: text,
    image,
    'tool-call': object({ id: string, name: string, arguments: string }),
    'tool-result': object({ toolCallId: string, content: resultContent, isError: optional(boolean) }),
  })),
  source: object({ kind: string }),
})
const usage = optional(object({ inputTokens: count, outputTokens: count, cacheReadTokens: optional(count), cacheWriteTokens: optional(count), reasoningTokens: optional(count) }))
const turn = { turn: count }
const step = { turn: count, step: count }

const SHAPES = shapeMap({
  'turn/start': object(turn),
  // Any reason: a newer rein may end a turn for one this one has no word for, and lists it as written.
  'turn/end': object({ ...turn, reason: string }),
  'step/start': object({ ...step, request: optional(object({ provider: string, model: string })) }),
  'step/end': object(step),
  'user/message': object({ message: message('user', 'system') }),
  'request/header': object({ provider: string, model: string }),
  'assistant/message': object({ message: message('assistant'), usage, provider: string, model: string, cost: optional(number) }),
  'tool/call': object({ callId: string, name: string, arguments: string, replaySafe: boolean }),
  'tool/result': object({ callId: string, content: resultContent, isError: boolean, code: optional(string), modelChars: optional(count) }),
  'llm/attempt': object({ usage, cost: optional(number) }),
  'summary/start': object({ request: object({ provider: string, model: string, maxTokens: count }), inputTokens: count }),
  'llm/resend': object({ request: object({ provider: string, model: string, maxTokens: optional(count) }), retry: count, fallback: count }),
  'context/compacted': object({
    pruned: list(object({ callId: string, name: string, chars: count })),
    prunedArguments: optional(list(object({ callId: string, name: string, chars: count }))),
    summary: optional(object({ text: string, fromSeq: count, toSeq: count, keptSeq: optional(count) })),
  }),
  'session/forked': object({ fromSessionId: string, beforeSeq: count }),
  'llm/progress': object({ outputChars: count }),
})

/** What is wrong with a core event's data (e.g. `.message.content: a list`), or undefined when it has its shape or is not a core type. */
export function coreEventProblem(event: SessionEvent): string | undefined {
  const problem = SHAPES.get(event.type)?.(event.data)
  return problem === undefined ? undefined : `data${problem.startsWith('.') ? problem : `: ${problem}`}`
}

/**
 * Throws `SESSION_CORRUPT` for the first core event of `events` without its shape (its readers —
 * messages, repair, resume — trust it). `log` names the log in the message (`session <id>`, a
 * file); `details` adds to the event's `{seq, type}`.
 */
export function refuseMisshapenEvents(events: readonly SessionEvent[], log: string, details: Record<string, unknown> = {}): void {
  for (const event of events) {
    const problem = coreEventProblem(event)
    if (problem === undefined) continue
    throw new ReinError('SESSION_CORRUPT', `${log} has event #${event.seq} (${event.type}) that is not as rein writes it: its ${problem}; rein leaves the log as it is — repair it or move it out of the sessions folder`, {
      details: { ...details, seq: event.seq, type: event.type },
    })
  }
}
