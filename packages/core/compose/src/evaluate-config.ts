/**
 * A row's config with its `!!js` values evaluated, as the loader evaluates them when the row
 * (re)starts. Used before a reload is applied: a restart whose new config fails is only logged by
 * the loader, and the row runs on with its old config while the reload would look applied. And
 * when a row's start fails on one: the loader's error does not say which value threw.
 *
 * What an expression threw is said by its kind only, unless it threw an Error of its own on purpose.
 * The expression is the user's text and may hold a key pasted in place of a variable's name, and the
 * engine's messages quote it (a ReferenceError names the bare word, a SyntaxError the token,
 * JSON.parse the text it was given).
 */

import { maskText, secretValues } from '@rein/base'
import { isJsExpr } from '@deepseek-ai/cordis-plugin-loader'
import { formatPath } from './check-config.ts'
import type { ConfigPath } from './unknown-keys.ts'

/**
 * The evaluated config, or the problems of the expressions that failed (`config.<field>: …`).
 * `evaluate` runs one expression where the loader will (the row's own entry); an expression with
 * side effects runs once more than it would otherwise.
 */
export function evaluateConfig(evaluate: (expression: string) => unknown, config: unknown): { config: unknown; problems: string[] } {
  const problems: string[] = []
  const walk = (value: unknown, path: ConfigPath): unknown => {
    if (isJsExpr(value)) {
      try {
        const result: unknown = evaluate(value.__jsExpr)
        problems.push(...undefinedIn(result, path))
        return result
      } catch (error) {
        problems.push(`${formatPath(path)}: ${expressionThrew(error)}`)
        return undefined
      }
    }
    if (Array.isArray(value)) return value.map((item, index) => walk(item, [...path, index]))
    if (typeof value !== 'object' || value === null) return value
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, [...path, key])]))
  }
  return { config: walk(config, []), problems }
}

/**
 * The fields of `config` whose `!!js` value gave undefined in `evaluated` (the loader's result):
 * the schema would put its default there without a word, and a default in the wrong place can
 * send a key to a server it was not meant for (a gateway's baseURL read from an unset variable).
 */
export function undefinedExpressions(config: unknown, evaluated: unknown, path: ConfigPath = []): string[] {
  if (isJsExpr(config)) return undefinedIn(evaluated, path)
  if (typeof config !== 'object' || config === null) return []
  const inner = typeof evaluated === 'object' && evaluated !== null ? evaluated : {}
  return Object.entries(config).flatMap(([key, value]) => undefinedExpressions(value, Reflect.get(inner, key), [...path, Array.isArray(config) ? Number(key) : key]))
}

/** Where the value an expression gave is, or holds in a plain object or array, undefined; each object looked in once (a value may hold a cycle). */
function undefinedIn(value: unknown, path: ConfigPath, seen = new WeakSet<object>()): string[] {
  if (value === undefined) return [gaveUndefined(path)]
  if (!Array.isArray(value) && !isPlainObject(value)) return []
  if (seen.has(value)) return []
  seen.add(value)
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value)
  return entries.flatMap(([key, item]) => undefinedIn(item, [...path, key], seen))
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function gaveUndefined(path: ConfigPath): string {
  return `${formatPath(path)}: the !!js expression gave undefined (does it read an environment variable that is unset?); give the field a value, or leave it out for its default`
}

/** The engine's own error classes: a class the expression defined could be named after anything it holds. */
const ENGINE_ERRORS = [ReferenceError, SyntaxError, TypeError, RangeError, URIError, EvalError, AggregateError, Error]

/** What usually causes each kind, for the person fixing the expression. */
const HINTS: Record<string, string> = {
  ReferenceError: 'it names a variable that is not defined (a bare word is read as one: quote text, and read the environment as process.env.NAME)',
  SyntaxError: 'it is not valid JavaScript, or it parsed text that is not JSON (check its quotes and brackets)',
  TypeError: 'it used a value of the wrong type, such as a property of undefined (is an environment variable it reads unset?)',
}

/**
 * The problem of a row whose `disabled` threw evaluating: its own `!!js`, or, for a row without
 * one, its group row's (a group's `disabled` is read by each of its rows).
 */
export function disabledThrew(entry: { options: { disabled?: unknown } }, error: unknown): string {
  return `${entry.options.disabled === undefined ? 'disabled, its group row\'s' : 'disabled'}: ${expressionThrew(error)}`
}

/**
 * What a problem line says after the field of a `!!js` value that threw: the message of an Error it
 * threw on purpose, else the kind of error and what usually causes it, never its message (see above).
 */
export function expressionThrew(error: unknown): string {
  const own = ownMessage(error)
  if (own !== undefined) return `the !!js expression threw: ${own}`
  const kind = kindOf(error)
  const hint = HINTS[kind]
  const code = systemCode(error)
  return `the !!js expression threw ${withArticle(kind)}${code ? ` (${code})` : ''}${hint ? `: ${hint}` : ''}; what it threw is not shown, as it may quote the expression or a secret`
}

/**
 * The message of an error the expression threw on purpose (`throw new Error('REIN_TOOLS_OFF is not
 * set')`): a plain Error without a system code, which no engine or Node API throws with the
 * expression's text. Values of secret-named environment variables in it are masked (`***`).
 */
function ownMessage(thrown: unknown): string | undefined {
  if (!(thrown instanceof Error) || Object.getPrototypeOf(thrown) !== Error.prototype) return undefined
  if (thrown.message === '' || Reflect.get(thrown, 'code') !== undefined) return undefined
  return maskText(thrown.message, secretValues(process.env))
}

function kindOf(thrown: unknown): string {
  if (thrown === null || thrown === undefined) return String(thrown)
  const engine = ENGINE_ERRORS.find((type) => Object.getPrototypeOf(thrown) === type.prototype)
  if (engine) return engine.name
  if (thrown instanceof Error) return 'Error'
  return typeof thrown === 'object' ? 'object' : typeof thrown
}

/** `a TypeError`, `an Error`, `a string`; `null` and `undefined` as they are. */
function withArticle(kind: string): string {
  if (kind === 'null' || kind === 'undefined') return kind
  return `${/^[aeio]/i.test(kind) ? 'an' : 'a'} ${kind}`
}

/** Node's code for a failed system call or argument (`ENOENT`, `ERR_INVALID_ARG_TYPE`): it names a kind of failure, never data. */
function systemCode(thrown: unknown): string | undefined {
  const code: unknown = thrown instanceof Error ? Reflect.get(thrown, 'code') : undefined
  return typeof code === 'string' && /^(?:E[A-Z]{2,}|ERR_[A-Z_]+)$/.test(code) ? code : undefined
}
