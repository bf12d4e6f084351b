/**
 * Checks a row's config against its plugin's `Config` before the row starts: unknown keys (where the
 * schema is schemastery) and what validation rejects, each as `config.<path>: <problem>`.
 */

import { isJsExpr } from '@deepseek-ai/cordis-plugin-loader'
import { isSecretName, maskText, secretsIn } from '@rein/base'
import { clonePlain, isPlainObject, isSchemastery, unknownKeys, type ConfigPath, type UnknownKey } from './unknown-keys.ts'
import { eachString } from './config-strings.ts'

interface StandardIssue {
  message: string
  path?: readonly (PropertyKey | { key: PropertyKey })[]
}

interface StandardSchema {
  '~standard': { validate: (value: unknown) => { issues?: readonly StandardIssue[] } | PromiseLike<unknown> }
}

/**
 * One line per problem, `[]` when the config is fine or `schema` is nothing compose can read. A
 * `!!js` value is not evaluated here: it is checked by the plugin when its row starts.
 */
export function configProblems(config: unknown, schema: unknown): string[] {
  return [...variableProblems(config), ...schemaProblems(config, schema)]
}

/**
 * What `configProblems` finds in a config whose `!!js` values are evaluated, without the
 * shell-variable check: what an expression gives is the plugin's to read (`'$HOME'` is text the
 * user wrote on purpose), as when the row first starts; the values written out were checked as written.
 */
export function schemaProblems(config: unknown, schema: unknown): string[] {
  if (isSchemastery(schema)) {
    const problems = unknownKeys(config, schema).map(describeUnknownKey)
    try {
      schema(clonePlain(config), { ignore: isJsExpr })
    } catch (error) {
      const problem = describeValidationError(error, config)
      if (problem) problems.push(problem)
    }
    return masked(problems, config)
  }
  if (isStandardSchema(schema) && !containsJsExpr(config)) return startConfigProblems(config, schema)
  return []
}

/**
 * The lines with what `config` holds under secret-named keys and `headers` masked: a schema's own
 * words may quote a key written in the file (`expected string but got {"token":"…"}`), a path
 * that `issueLine` cannot see.
 */
function masked(lines: string[], config: unknown): string[] {
  if (lines.length === 0) return lines
  const secrets = secretsIn(config)
  return secrets.length === 0 ? lines : lines.map((line) => maskText(line, secrets))
}

/**
 * A value that is only a variable as a shell or docker-compose writes it (`${GATEWAY_URL}`,
 * `$MODEL`): a cordis.yml substitutes none, so the plugin would get the text itself (a model named
 * `${MODEL}`, a key `$OPENAI_API_KEY`). Inside longer text it is left alone: a prompt or a command
 * line may mean it for a shell.
 */
const SHELL_VARIABLE = /^\$\{([A-Za-z_]\w*)(?::?-[^}]*)?\}$|^\$([A-Z_][A-Z\d_]*)$/

function variableProblems(value: unknown): string[] {
  const problems: string[] = []
  eachString(value, (text, path) => {
    const match = SHELL_VARIABLE.exec(text)
    const name = match?.[1] ?? match?.[2]
    if (name !== undefined) problems.push(`${formatPath(path)}: ${text} is not read as an environment variable (a cordis.yml substitutes none): write !!js process.env.${name}, or the value itself`)
  })
  return problems
}

function describeUnknownKey({ path, known, suggestion }: UnknownKey): string {
  if (suggestion) return `${formatPath(path)}: unknown key; did you mean ${suggestion}?`
  const key = path.at(-1)
  // `apiKey: sk-…` where the plugin takes the variable's name (`apiKeyEnv`): say why, not only which keys there are.
  const reference = known.find((name) => name.endsWith('Env') && isSecretName(name.slice(0, -'Env'.length)))
  if (reference && typeof key === 'string' && isSecretName(key)) {
    return `${formatPath(path)}: unknown key; rein does not read a secret from the file: put it in an environment variable and set ${reference} to that variable's name`
  }
  return `${formatPath(path)}: unknown key (the keys here are ${known.join(', ')})`
}

/**
 * A failure at a `!!js` value says nothing about the value the expression will produce, so it is
 * left to the start (see `startConfigProblems`).
 */
function describeValidationError(error: unknown, config: unknown): string | undefined {
  const path = validationPath(error)
  const message = error instanceof Error ? error.message : String(error)
  if (!path) return containsJsExpr(config) ? undefined : `config: ${message}`
  if (reachesJsExpr(config, path)) return undefined
  return issueLine(path, message)
}

/**
 * What validating a row's config finds as the row starts (its `!!js` values evaluated), one line per
 * issue as before the start; `[]` when it is valid or `schema` is nothing cordis validates. The loader
 * validates it again, on the config as given: this check works on a copy.
 */
export function startConfigProblems(config: unknown, schema: unknown): string[] {
  if (!isStandardSchema(schema)) return []
  let result: ReturnType<StandardSchema['~standard']['validate']>
  try {
    result = schema['~standard'].validate(clonePlain(config))
  } catch (error) {
    // A check of the plugin's own (a schemastery transform, another library's validate) throws its error as it is.
    return masked([`config: ${error instanceof Error ? error.message : String(error)}`], config)
  }
  if ('then' in result) return []
  return masked(issueLines(result.issues), config)
}

function issueLines(issues: readonly StandardIssue[] = []): string[] {
  return issues.map((issue) => issueLine((issue.path ?? []).map(pathKey), issue.message))
}

/**
 * `config.<path>: <problem>`. schemastery's message starts with the path (`$.models[0].id missing
 * required value`); the line puts `config.<path>` first instead.
 */
function issueLine(path: ConfigPath, message: string): string {
  // What is under a secret-named key or a header may be a key: the message names the field, not the value.
  if (path.some((key) => typeof key === 'string' && (isSecretName(key) || /^headers$/i.test(key)))) {
    return `${formatPath(path)}: not a value of the type this field takes (not shown: it may be a secret); a key or a header's value is text, so quote it`
  }
  const prefix = `${path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : `${text}.${key}`), '$')} `
  return `${formatPath(path)}: ${message.startsWith(prefix) ? message.slice(prefix.length) : message}`
}

function validationPath(error: unknown): ConfigPath | undefined {
  if (!(error instanceof Error) || error.name !== 'ValidationError') return undefined
  const path: unknown = Reflect.get(Reflect.get(error, 'options') ?? {}, 'path') ?? []
  if (!Array.isArray(path) || !path.every((key) => typeof key === 'string' || typeof key === 'number')) return undefined
  return path
}

/** `config.retry.maxRetries`, `config.models[0].id`, `config.headers["X-Trace"]`. */
export function formatPath(path: ConfigPath): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`
    return /^[A-Za-z_$][\w$]*$/.test(key) ? `${text}.${key}` : `${text}[${JSON.stringify(key)}]`
  }, 'config')
}

function pathKey(segment: PropertyKey | { key: PropertyKey }): string | number {
  const key = typeof segment === 'object' ? segment.key : segment
  return typeof key === 'number' ? key : String(key)
}

function isStandardSchema(value: unknown): value is StandardSchema {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false
  const standard: unknown = Reflect.get(value, '~standard')
  return typeof standard === 'object' && standard !== null && typeof Reflect.get(standard, 'validate') === 'function'
}

/** Whether `value` holds a `!!js` value anywhere. */
export function containsJsExpr(value: unknown): boolean {
  if (isJsExpr(value)) return true
  if (Array.isArray(value)) return value.some(containsJsExpr)
  return isPlainObject(value) && Object.values(value).some(containsJsExpr)
}

function reachesJsExpr(config: unknown, path: ConfigPath): boolean {
  let value = config
  for (const key of path) {
    if (isJsExpr(value)) return true
    value = isPlainObject(value) || Array.isArray(value) ? Reflect.get(value, key) : undefined
  }
  return isJsExpr(value)
}
