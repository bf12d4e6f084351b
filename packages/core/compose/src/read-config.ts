/** Reads a composition file (YAML in the cordis dialect, or JSON) and checks the shape of its rows. */

import { readFile } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { inspect } from 'node:util'
import { entryListSchema } from '@deepseek-ai/cordis-plugin-include'
import { isJsExpr, type EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import { closest, maskText, ReinError, secretValues } from '@rein/base'
import * as yaml from 'js-yaml'

const ROW_KEYS = new Set(['id', 'name', 'config', 'disabled', 'group', 'inject', 'isolate', 'intercept'])
const ID = /^[\w.-]+$/

/** Throws `CONFIG_NOT_FOUND`, or `CONFIG_INVALID` with every problem found, one per line. */
export async function readConfigFile(path: string): Promise<EntryOptions[]> {
  let bytes: Buffer
  try {
    bytes = await readFile(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new ReinError('CONFIG_NOT_FOUND', `${path}: no such file`, { cause: error })
    if (code === 'EISDIR') throw new ReinError('CONFIG_INVALID', `${path} is a folder, not a composition file: name the cordis.yml inside it (${join(path, 'cordis.yml')})`, { cause: error })
    throw new ReinError('CONFIG_INVALID', `${path}: cannot read (${code ?? (error as Error).message})`, { cause: error })
  }
  let text = decodeText(bytes, path)
  // A byte order mark (Windows editors save one) is not JSON; js-yaml skips it, JSON.parse does not.
  if (text.startsWith('\uFEFF')) text = text.slice(1)
  const json = extname(path) === '.json'
  if (text.trim() === '') throw invalid(path, [NO_ROWS])
  let data: unknown
  try {
    data = json ? JSON.parse(text) : yaml.load(text, { schema: entryListSchema, filename: path })
  } catch (error) {
    // No cause: the parser's error quotes the file (js-yaml's keeps all of it), which may hold a secret.
    throw invalid(path, [json ? `not valid JSON: ${withLineAndColumn((error as Error).message, text)}` : `not valid YAML: ${yamlProblem(error, text)}`])
  }
  // JSON has no aliases: each of its values is written out.
  const unbounded = json ? undefined : aliasProblem(data)
  if (unbounded !== undefined) throw invalid(path, [unbounded])
  // A file of comments alone (every row commented out) parses as nothing.
  if (data === undefined || data === null) throw invalid(path, [NO_ROWS])
  if (!Array.isArray(data)) throw invalid(path, ['the top level must be a list of plugin rows (- id: …, name: …)'])
  return checkRows(data, path)
}

const NO_ROWS = 'the file has no rows: list the plugin rows (- id: …, name: …), one per plugin'

/**
 * The file's text, refused when it is not UTF-8: decoded as UTF-8 regardless, a file saved in
 * Latin-1 would load with its accented letters turned into replacement characters, without a
 * word, and one saved as UTF-16 would fail on its first null byte, saying nothing of why.
 */
function decodeText(bytes: Buffer, path: string): string {
  if (isUtf16(bytes)) throw invalid(path, ['saved as UTF-16 (as Windows PowerShell\'s > and Notepad\'s "Unicode" write it): save the file as UTF-8'])
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw invalid(path, [`not UTF-8 text: the bytes at ${byteLineAndColumn(bytes, firstNonUtf8Byte(bytes))} are not UTF-8; save the file as UTF-8`])
  }
}

/** A byte order mark of UTF-16, or text that starts with an ASCII character written in two bytes. */
function isUtf16(bytes: Buffer): boolean {
  const [first, second] = bytes
  if ((first === 0xff && second === 0xfe) || (first === 0xfe && second === 0xff)) return true
  return bytes.length >= 2 && (first === 0) !== (second === 0)
}

/** The offset of the first byte that cannot start or continue UTF-8: where the longest prefix that decodes goes wrong. */
function firstNonUtf8Byte(bytes: Buffer): number {
  const decodes = (length: number, stream: boolean) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, length), { stream })
      return true
    } catch {
      return false
    }
  }
  // A prefix cut inside a character decodes when streaming (the rest may follow), so validity only falls once.
  let fits = 0
  let fails = bytes.length
  while (fails - fits > 1) {
    const middle = (fits + fails) >> 1
    if (decodes(middle, true)) fits = middle
    else fails = middle
  }
  // That prefix may end on the start of a character the next byte breaks: a Latin-1 accented
  // letter (0xC2–0xF4) is a UTF-8 lead byte. The bad character starts where the prefix last
  // decodes whole, at most 3 bytes back.
  for (let back = 0; back < 3 && fits > 0 && !decodes(fits, false); back++) fits--
  return fits
}

/** `line 6, column 37` of the byte at `offset`, the column counted in characters. */
function byteLineAndColumn(bytes: Buffer, offset: number): string {
  const lineStart = bytes.lastIndexOf(0x0a, offset - 1) + 1
  const line = bytes.subarray(0, lineStart).filter((byte) => byte === 0x0a).length + 1
  const column = new TextDecoder('utf-8').decode(bytes.subarray(lineStart, offset)).length + 1
  return `line ${line}, column ${column}`
}

/**
 * The most values a file's aliases may add to it, each alias counted as a copy of its anchor's value.
 * js-yaml shares that value, but every check, the loader and any JSON of the rows walk it in full:
 * nine nested lists of nine aliases (a file of ten lines) would be walked as 387 million values.
 * Shared model lists add hundreds.
 */
const MAX_ALIASED_VALUES = 100_000
/**
 * The deepest a file's values may nest through aliases (js-yaml refuses more than 100 written out): a
 * chain of anchors each holding the one before is small, but as deep as it is long: 20 000 of them
 * go past the stack of a recursive walk, and the load of one took minutes.
 */
const MAX_ALIASED_DEPTH = 500

const WHAT_TO_DO = 'write the repeated part out, or use fewer nested aliases'

/** What walking a value in full meets: its values, each alias counted as a copy, and how deep they nest. */
interface Extent {
  values: number
  height: number
}

const SCALAR: Extent = { values: 1, height: 0 }

/** Thrown by the walk of `aliasProblem` on the first thing that makes the file unbounded to walk. */
class Unbounded {
  constructor(readonly problem: string) {}
}

/**
 * Why walking the parsed file would not end (a value holding itself: an anchor's value with its own
 * alias inside it) or would cost far more than its text (see the limits above), as a problem line.
 * Each shared value is measured once, so this costs as much as the text, not the expansion.
 */
function aliasProblem(data: unknown): string | undefined {
  const measured = new Map<object, Extent>()
  // The values being measured (those holding the current one), each with the length of its path.
  const open = new Map<object, number>()
  const path: (string | number)[] = []
  let written = 1
  const tooDeep = (depth: number) => {
    if (depth > MAX_ALIASED_DEPTH) throw new Unbounded(`the file nests values more than ${MAX_ALIASED_DEPTH} deep through its aliases: ${WHAT_TO_DO}`)
  }
  const measure = (value: unknown, depth: number): Extent => {
    if (typeof value !== 'object' || value === null) return SCALAR
    const known = measured.get(value)
    // A value measured before may be met again deeper than it was first.
    if (known) {
      tooDeep(depth + known.height)
      return known
    }
    const holder = open.get(value)
    if (holder !== undefined) throw new Unbounded(heldInItself(data, path, holder))
    tooDeep(depth)
    open.set(value, path.length)
    const extent = { values: 1, height: 0 }
    for (const [key, child] of Object.entries(value)) {
      written += 1
      path.push(Array.isArray(value) ? Number(key) : key)
      const inner = measure(child, depth + 1)
      path.pop()
      extent.values += inner.values
      extent.height = Math.max(extent.height, inner.height + 1)
    }
    open.delete(value)
    measured.set(value, extent)
    return extent
  }
  try {
    const { values } = measure(data, 0)
    if (values - written <= MAX_ALIASED_VALUES) return undefined
    return `the file expands to more than ${MAX_ALIASED_VALUES} values through its aliases (each alias counts as a copy of its anchor's value, and every check and the loader walk them all): ${WHAT_TO_DO}`
  } catch (error) {
    if (error instanceof Unbounded) return error.problem
    throw error
  }
}

/** `row "a": config.x[1] is an alias of config.x, …` for an alias at `path` of the value at its first `holder` keys. */
function heldInItself(rows: unknown, path: readonly (string | number)[], holder: number): string {
  const [index] = path
  // The top level is a list of rows (else it is refused next): a path inside it is a row's field.
  const inRow = typeof index === 'number' && Array.isArray(rows)
  const id = inRow ? (rows[index] as { id?: unknown } | null | undefined)?.id : undefined
  const row = !inRow ? 'the file' : typeof id === 'string' ? `row "${id}"` : `row #${index + 1}`
  const start = inRow ? 1 : 0
  const anchor = holder === 0 ? 'the whole file' : fieldPath(path.slice(start, holder))
  return `${row}: ${fieldPath(path.slice(start))} is an alias of ${anchor}, which holds it: a value cannot contain its own alias (it would never end); write the value out`
}

/** `config.models[2]` for a path inside a row; `the row` for none. */
function fieldPath(keys: readonly (string | number)[]): string {
  if (keys.length === 0) return 'the row'
  return keys.map((key, at) => (typeof key === 'number' ? `[${key}]` : at === 0 ? key : `.${key}`)).join('')
}

/**
 * `… at line 3, column 18` for V8's `… in JSON at position 57` (newer V8 appends `(line 3 column 18)`
 * itself): an offset into the file is no help to a person with an editor. Node 20 words some
 * errors with a quote of the file instead of a position (`Unexpected token ']', ..."},\n]" is not
 * valid JSON`): the quote is dropped (it may hold a secret, and breaks the one-line report) and the
 * place found by parsing shorter prefixes.
 */
function withLineAndColumn(message: string, text: string): string {
  const match = / in JSON at position (\d+)(?: \(line \d+ column \d+\))?/.exec(message)
  if (match) return `${message.slice(0, match.index)} ${lineAndColumn(text, Number(match[1]))}${message.slice(match.index + match[0].length)}`
  const quoted = /^(.*?), (?:\.\.\.)?"[\s\S]*"(?:\.\.\.)? is not valid JSON$/.exec(message)
  if (!quoted) return message
  const offset = failingOffset(text)
  return offset === undefined ? quoted[1] ?? message : `${quoted[1] ?? ''} ${lineAndColumn(text, offset)}`
}

/**
 * js-yaml's reasons that quote the file's text, each put without it: a tag, an alias or a tag
 * handle is what a value written unquoted becomes when it starts with `!` or `*`, and such a
 * value may be a key (`api-key: !s3cr3t`).
 */
const QUOTING_REASONS: readonly (readonly [RegExp, string])[] = [
  // `!!js` is a tag rein defines for text: a list or a mapping after it is what js-yaml refuses.
  [/^unknown tag !<tag:yaml\.org,2002:js>/, '!!js is followed by a list or a mapping, but it takes its expression as text: quote the expression after the tag (!!js "[\'write\']")'],
  [/^unknown tag /, 'unknown tag: a value starting with ! is read as a YAML tag; quote the value'],
  [/^(?:tag name|tag prefix|undeclared tag handle|there is a previously declared suffix)/, 'malformed tag: a value starting with ! is read as a YAML tag; quote the value'],
  [/^unidentified alias /, 'unknown alias: a value starting with * is read as a YAML alias; quote the value'],
]

/**
 * The parser's reason and where, `… at line 11, column 1`, without its code frame: the lines around
 * the error may hold a secret (`rein config` masks them; this must not print them either).
 */
function yamlProblem(error: unknown, text: string): string {
  if (!(error instanceof yaml.YAMLException)) return 'the parser failed without saying where'
  const reason = QUOTING_REASONS.find(([pattern]) => pattern.test(error.reason))?.[1] ?? error.reason
  const { line, column } = error.mark
  const lines = text.replace(/\n$/, '').split('\n')
  if (line < lines.length) return `${reason} at line ${line + 1}, column ${column + 1}`
  // js-yaml places an end it did not expect on the line after the last, which no editor shows.
  const opens = UNCLOSED.test(error.reason) ? openingLine(lines, error.reason) : undefined
  return `${reason} at the end of the file (line ${lines.length} is its last)${opens === undefined ? '' : `: it opens at line ${opens} and is never closed`}`
}

/** js-yaml's reason for a quote or bracket the file ends inside. */
const UNCLOSED = /^unexpected end of the stream within /
/** The most text parsed looking for where an unclosed value opens: each line tried parses the lines before it. */
const MAX_OPENING_SEARCH_CHARS = 256 * 1024

/**
 * Where the value the file ends inside (`reason` names its kind) opens: going back from the end,
 * the line after the last prefix of lines that does not end inside that kind of value (it parses,
 * or fails for another reason: a bracket the value sits in). From the end, so an earlier value that
 * rightly spans lines is never taken for it, and the usual case, an unclosed value near the end,
 * costs a few parses. Undefined past the budget.
 */
function openingLine(lines: readonly string[], reason: string): number | undefined {
  let parsed = 0
  for (let count = lines.length - 1; count >= 0; count--) {
    const prefix = lines.slice(0, count).join('\n')
    parsed += prefix.length
    if (parsed > MAX_OPENING_SEARCH_CHARS) return undefined
    try {
      yaml.load(prefix, { schema: entryListSchema })
    } catch (error) {
      if (error instanceof yaml.YAMLException && error.reason === reason) continue
    }
    return count + 1
  }
  return undefined
}

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset)
  return `at line ${before.split('\n').length}, column ${before.length - before.lastIndexOf('\n')}`
}

/** Where JSON.parse first meets something wrong: the last character of the shortest prefix that fails other than by ending early. */
function failingOffset(text: string): number | undefined {
  if (!failsWithin(text)) return undefined
  let fits = 0
  let fails = text.length
  while (fails - fits > 1) {
    const middle = (fits + fails) >> 1
    if (failsWithin(text.slice(0, middle))) fails = middle
    else fits = middle
  }
  return fails - 1
}

/** Whether `text` fails to parse before its end (a prefix of good JSON only runs out). */
function failsWithin(text: string): boolean {
  try {
    JSON.parse(text)
    return false
  } catch (error) {
    const message = error instanceof Error ? error.message : ''
    if (message.includes('Unexpected end of JSON input')) return false
    const at = / in JSON at position (\d+)/.exec(message)
    return at === null || Number(at[1]) < text.length
  }
}

/** Returns the rows when every one is well-formed; throws `CONFIG_INVALID` listing what is not. */
export function checkRows(rows: unknown[], path: string): EntryOptions[] {
  const problems = rowProblems(rows, 'row')
  if (problems.length > 0) throw invalid(path, problems)
  return rows as EntryOptions[]
}

function rowProblems(rows: unknown[], where: string, seen = new Set<string>()): string[] {
  const problems: string[] = []
  rows.forEach((row, index) => {
    const label = `${where} #${index + 1}`
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      problems.push(`${label}: must be a mapping with at least id and name`)
      return
    }
    const entry = row as Record<string, unknown>
    const id = typeof entry.id === 'string' ? entry.id : undefined
    const at = id ? `row "${id}"` : label
    if (id === undefined) problems.push(`${label}: ${idProblem(entry.id)}`)
    else if (!ID.test(id)) problems.push(`${at}: id may use letters, digits, "_", "-" and "." only`)
    else if (seen.has(id)) problems.push(`${at}: the id is used by another row`)
    else seen.add(id)
    if (typeof entry.name !== 'string' || entry.name.trim() === '') problems.push(`${at}: needs a name (the plugin's package name or a ./path)`)
    else if (entry.name !== entry.name.trim()) problems.push(`${at}: name has spaces at its start or end (${JSON.stringify(entry.name)}): remove them`)
    for (const key of Object.keys(entry)) {
      if (!ROW_KEYS.has(key)) problems.push(`${at}: ${unknownField(key)}`)
    }
    problems.push(...fieldProblems(entry, at))
    if (entry.group === true) {
      if (!Array.isArray(entry.config)) problems.push(`${at}: a group's config must be a list of rows`)
      else problems.push(...rowProblems(entry.config, `${at} > row`, seen))
    }
  })
  return problems
}

/** A row whose `id` is missing, or is not text: YAML reads `id: 5` or `id: true` as a number or a boolean. */
function idProblem(id: unknown): string {
  if (id === undefined || id === null) return 'needs an id (a stable name for the row, e.g. "id: tools")'
  if (typeof id === 'number' || typeof id === 'boolean') return `id must be text, not ${String(id)}: quote it (id: "${String(id)}")`
  return `id must be text, not ${isJsExpr(id) ? 'a !!js expression (the loader never evaluates it)' : 'a list or a mapping'} (e.g. "id: tools")`
}

/**
 * A field a row does not have, with the one it most likely meant (`confg`: `config`). A YAML merge
 * key is said apart: the loader's dialect (YAML's JSON schema) does not merge, it reads `<<` as a field.
 */
function unknownField(key: string): string {
  if (key === '<<') return 'unknown field "<<": YAML merge keys (<<: *anchor) are not read in a cordis.yml; write the row\'s fields out'
  const near = closest(key, [...ROW_KEYS])
  return near ? `unknown field "${key}"; did you mean ${near}?` : `unknown field "${key}" (a row has ${[...ROW_KEYS].join(', ')})`
}

/**
 * The row fields the loader reads as it finds them: `disabled: "false"` (or YAML 1.2's `no`, a
 * string) would count as true and switch the row off without a word. A `!!js` value is checked
 * when it runs.
 */
function fieldProblems(entry: Record<string, unknown>, at: string): string[] {
  const problems: string[] = []
  // Empty (null: `disabled:` with nothing after it, a list whose items are commented out) is unset, as the loader reads it.
  const set = (value: unknown) => value !== undefined && value !== null && !isJsExpr(value)
  const { disabled, group, inject, isolate, intercept } = entry
  if (set(disabled) && typeof disabled !== 'boolean') problems.push(`${at}: disabled must be true or false (unquoted), not ${JSON.stringify(disabled)}`)
  // Any value the loader finds true makes the row a group (`group: "no"` included).
  if (set(group) && typeof group !== 'boolean') problems.push(`${at}: group must be true or false (unquoted), not ${JSON.stringify(group)}`)
  // The loader evaluates `!!js` in `disabled` and `config` only; the others it reads as written.
  for (const [key, value] of [['group', group], ['inject', inject], ['isolate', isolate], ['intercept', intercept]] as const) {
    if (holdsJsExpr(value)) problems.push(`${at}: ${key} cannot hold a !!js expression (only config and disabled are evaluated); write it out`)
  }
  if (set(inject) && !Array.isArray(inject) && !isMapping(inject)) problems.push(`${at}: inject must be a list of service names (or a mapping of them)`)
  if (Array.isArray(inject) && inject.some((name) => typeof name !== 'string')) problems.push(`${at}: inject must list service names (text), as in [tools, llm]`)
  for (const [key, value] of [['isolate', isolate], ['intercept', intercept]] as const) {
    if (set(value) && !isMapping(value)) problems.push(`${at}: ${key} must be a mapping`)
  }
  return problems
}

/** Whether `value` is, or holds at any depth, a `!!js` expression. */
function holdsJsExpr(value: unknown): boolean {
  if (isJsExpr(value)) return true
  if (typeof value !== 'object' || value === null) return false
  return Object.values(value).some(holdsJsExpr)
}

function isMapping(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * `CONFIG_INVALID` (or the given code) listing every problem, one per line, and in `details.problems`;
 * values of secret-named environment variables masked, as a schema check quotes what a `!!js` read,
 * in the `cause` too.
 */
export function invalid(path: string, problems: string[], cause?: unknown, code: 'CONFIG_INVALID' | 'PLUGIN_NOT_BUILT' = 'CONFIG_INVALID'): ReinError {
  const secrets = secretValues(process.env)
  problems = problems.map((line) => maskText(line, secrets))
  const count = problems.length === 1 ? 'a problem' : `${problems.length} problems`
  return new ReinError(code, `${path} has ${count}:\n${problems.map((line) => `  - ${line}`).join('\n')}`, {
    cause: cause === undefined ? undefined : maskedCause(cause, secrets),
    details: { path, problems },
  })
}

/**
 * A copy of each error in the cause's chain with only its name, code, message and stack, masked: a
 * module that fails as it is imported may quote a key it read, and not only where `inspect` looks
 * (Node's URL error keeps its `input` in a property; a getter, a string past inspect's length).
 */
function maskedCause(error: unknown, secrets: readonly string[], depth = 0): unknown {
  if (!(error instanceof Error)) return maskText(typeof error === 'string' ? error : inspect(error, { depth: 10, maxStringLength: Infinity }), secrets)
  const cause = error.cause === undefined || depth >= 16 ? undefined : { cause: maskedCause(error.cause, secrets, depth + 1) }
  const copy = new Error(maskText(error.message, secrets), cause)
  const code: unknown = Reflect.get(error, 'code')
  return Object.assign(copy, { name: error.name, stack: maskText(error.stack ?? '', secrets) }, typeof code === 'string' ? { code } : {})
}
