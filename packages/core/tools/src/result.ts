/** What `ctx.tools.execute` returns, and the part of it a session log keeps. */

import { kindOf, type FrozenJson, type JsonValue } from '@rein/base'
import { isThenable } from './thenable.ts'

/** Content a model reads as a tool result. Images travel by reference, never inline bytes. */
export type ToolContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; mediaType: string; url: string }
/** What the model reads of a result: text and image parts. */
export type ToolContent = readonly ToolContentPart[]

/** Codes the registry itself produces. A body may throw a `ReinError` with its own code, which is kept. */
export type ToolErrorCode =
  | 'UNKNOWN_TOOL'
  | 'INVALID_ARGS'
  | 'DENIED'
  | 'INVALID_TOOL_OUTPUT'
  | 'ABORTED_BEFORE_DISPATCH'
  | 'ABORTED'
  | 'TOOL_TIMEOUT'
  | 'TOOL_FAILED'
  | 'BLOCKED'
  | 'WRAPPER_MISUSE'
  | 'INVALID_SIGNAL'

/** A call that succeeded: its validated value and the content the model reads. */
export interface ToolSuccess<V = JsonValue> {
  isError: false
  /** The canonical value, validated against `output.schema`. Execution-local: logs keep `content` and `meta`. */
  value: FrozenJson<V>
  content: ToolContent
  /** `output.presentationMeta(args, value)`, persisted so presenters can run on replay. */
  meta?: FrozenJson
}

/** A call that failed: its code and message, and the one text part the model reads. */
export interface ToolFailure {
  isError: true
  error: { code: ToolErrorCode | (string & {}); message: string }
  /** Always `Error: <message>` as a single text part. */
  content: ToolContent
}

/** What `execute` resolves to: a success or a failure, never a throw. */
export type ToolResult<V = JsonValue> = ToolSuccess<V> | ToolFailure

/** The part of a result that outlives the process: what presenters and `summarize` receive. */
export interface DurableToolResult {
  isError: boolean
  content: ToolContent
  meta?: JsonValue
}

/** A failure result: the model reads exactly `Error: <message>`. */
export function failure(code: ToolErrorCode | (string & {}), message: string): ToolFailure {
  return Object.freeze({
    isError: true,
    error: Object.freeze({ code, message }),
    content: Object.freeze([Object.freeze({ type: 'text' as const, text: `Error: ${message}` })]),
  })
}

/** The longest image url a result may carry. */
const MAX_IMAGE_URL_CHARS = 8192

/**
 * Normalizes what `render` or a hook gave: a string becomes one text part; anything else must be
 * parts. `gave` says where it came from in a message, e.g. `output.render returned`.
 */
export function toContent(content: string | ToolContent, gave = 'the content is'): ToolContent {
  if (typeof content === 'string') return Object.freeze([Object.freeze({ type: 'text' as const, text: content })])
  if (isThenable(content)) {
    // An async render or hook: never awaited, so its rejection must not end the process as an unhandled one.
    content.then(undefined, () => {})
    throw new TypeError(`${gave} a promise, which is not awaited; it must be a string or an array of content parts, given synchronously`)
  }
  if (!Array.isArray(content)) throw new TypeError(`${gave} ${kindOf(content)}; it must be a string or an array of content parts ({type: 'text', text})`)
  return Object.freeze(content.map((part: unknown, i) => {
    const p = part as Record<string, unknown>
    if (p?.type === 'text' && typeof p.text === 'string') return Object.freeze({ type: 'text' as const, text: p.text })
    if (p?.type === 'image' && typeof p.mediaType === 'string' && typeof p.url === 'string') {
      // Where the image is, never the image: its bytes would pass every output cap, as text in each request after.
      if (/^data:/i.test(p.url) || p.url.length > MAX_IMAGE_URL_CHARS) {
        throw new TypeError(`content[${i}]: an image's url must say where it is (a file or an https URL of at most ${MAX_IMAGE_URL_CHARS} characters), not hold it (data:)`)
      }
      return Object.freeze({ type: 'image' as const, mediaType: p.mediaType, url: p.url })
    }
    throw new TypeError(`content[${i}] must be {type: 'text', text} or {type: 'image', mediaType, url}, but is ${kindOf(part)}${p?.type === undefined ? '' : ` of type ${JSON.stringify(p.type)}`}`)
  }))
}
