/** The one error type rein throws: a stable `code` to route on, a message for people, a cause chain. */

const BRAND = Symbol.for('rein.error')

export interface ReinErrorOptions {
  /** The error this one wraps; rendered by `errorChain`. */
  cause?: unknown
  /** Structured facts for logs and callers (never secrets). */
  details?: Readonly<Record<string, unknown>>
}

/**
 * An error with a stable, UPPER_SNAKE `code`. Callers branch on `code`, never on `message`.
 * Use `isReinError` rather than `instanceof`: a process can hold two copies of this module.
 */
export class ReinError<C extends string = string> extends Error {
  override readonly name = 'ReinError'
  readonly code: C
  readonly details: Readonly<Record<string, unknown>> | undefined

  constructor(code: C, message: string, options: ReinErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.details = options.details
    Object.defineProperty(this, BRAND, { value: true })
  }

  toJSON(): { name: string; code: C; message: string; details?: Readonly<Record<string, unknown>> } {
    return { name: this.name, code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) }
  }
}

/** True for a `ReinError` from any copy of this module; with `code`, also checks the code. */
export function isReinError<C extends string = string>(value: unknown, code?: C): value is ReinError<C> {
  if (typeof value !== 'object' || value === null) return false
  // A thrown Proxy may throw on any read: such a value is no ReinError, and asking must not throw.
  try {
    if ((value as Record<symbol, unknown>)[BRAND] !== true) return false
    return code === undefined || (value as ReinError).code === code
  } catch {
    return false
  }
}

const MAX_CHAIN = 16

/**
 * Renders an error and its `cause` chain, one line per link, outermost first:
 * `TOOL_FAILED: weather lookup failed` then `  caused by: TypeError: fetch failed`.
 * Stops at cycles and after 16 links.
 */
export function errorChain(error: unknown): string {
  const { links, cycle } = causeLinks(error)
  const lines = links.map((link, index) => (index === 0 ? describe(link) : `  caused by: ${describe(link)}`))
  if (cycle) lines.push('  caused by: (cycle)')
  return lines.join('\n')
}

/** Said of a value that throws when read (a hostile or revoked Proxy). */
const UNREADABLE = 'a value that cannot be printed'

/** An error and its `cause`s, outermost first: at most 16, each once (a cycle ends the walk). */
export function errorCauses(error: unknown): unknown[] {
  return causeLinks(error).links
}

function causeLinks(error: unknown): { links: unknown[]; cycle: boolean } {
  const links: unknown[] = []
  let current: unknown = error
  while (current !== undefined && links.length < MAX_CHAIN) {
    if (links.includes(current)) return { links, cycle: true }
    links.push(current)
    current = causeOf(current)
  }
  return { links, cycle: false }
}

/** The next link of a chain; none from a value that throws when read. */
function causeOf(link: unknown): unknown {
  try {
    return link instanceof Error || isReinError(link) ? (link as Error).cause : undefined
  } catch {
    return undefined
  }
}

function describe(error: unknown): string {
  try {
    if (isReinError(error)) return `${error.code}: ${error.message}`
    if (error instanceof Error) {
      const code = (error as { code?: unknown }).code
      const label = typeof code === 'string' ? `${error.name} [${code}]` : error.name
      return `${label}: ${error.message}`
    }
    if (typeof error === 'string') return error
    return JSON.stringify(error) ?? messageOf(error)
  } catch {
    return messageOf(error)
  }
}

/**
 * What a thrown value says about itself: an Error's message, or a string, number or boolean as
 * text; undefined for anything else (null, undefined, an object with no prototype) or an empty
 * message. Never throws, whatever was thrown (a message getter that throws, a revoked proxy).
 */
export function thrownMessage(thrown: unknown): string | undefined {
  try {
    if (thrown instanceof Error) return typeof thrown.message === 'string' && thrown.message !== '' ? thrown.message : undefined
    if (typeof thrown === 'string') return thrown === '' ? undefined : thrown
    if (typeof thrown === 'number' || typeof thrown === 'boolean' || typeof thrown === 'bigint') return String(thrown)
    return undefined
  } catch {
    return undefined
  }
}

/**
 * What a thrown value says, for a message: an Error's message, a plain object's string `message`,
 * anything else as a string; never throws (an object without a prototype has no string form).
 */
export function messageOf(error: unknown): string {
  try {
    if (error instanceof Error) return error.message
    if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') return (error as { message: string }).message
    return String(error)
  } catch {
    return UNREADABLE
  }
}

/** A value's kind for a message: `a number`, `an array`, `an object`; `null` and `undefined` as they are. */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value)
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}
