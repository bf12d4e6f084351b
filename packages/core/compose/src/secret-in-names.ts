/**
 * A key in a field that names something. A provider's route, a model's id, a label, an agent's name
 * are written into the session log as they are (`step/start`, `request/header`, `llm/attempt`) and
 * shown in messages: nothing masks them, as they are not meant to hold a secret. A value read there
 * from a secret-named variable (`model: !!js process.env.OPENAI_API_KEY`), or pasted there
 * (`label: sk-…`), would reach every session file, so the row is refused, the value never quoted.
 */

import { isSecretName, KEY_SHAPES, secretEnvironment } from '@rein/base'
import { formatPath } from './check-config.ts'
import { eachString } from './config-strings.ts'

/** Keys whose value is a name: the ones rein's plugins write to the session log and show in messages. */
const NAME_KEYS = new Set(['id', 'name', 'label', 'title', 'provider', 'providerName', 'model'])

/** Where a key has its place: under a secret-named key (`apiKey`, `token`) or `headers` nothing is a name. */
const HEADERS = /^headers$/i

/**
 * Shorter values of a variable are no key to look for: a local server takes any key, and people set
 * OPENAI_API_KEY=ollama (or lm-studio, EMPTY, not-needed) beside a provider of that very name.
 */
const MIN_SECRET = 16

/**
 * The key shapes as a name must hold them to be refused. `sk-` is two letters and a hyphen, which
 * names hold as a word (`opus-mt-en-sk-finetuned-…`, a Slovak model): it counts only where no word
 * goes on before it (not after a letter, digit, `_` or `-`). The other prefixes are no words.
 */
const NAME_KEY_SHAPES = KEY_SHAPES.map(({ kind, pattern }) => ({ kind, pattern: pattern.source.startsWith('\\bsk-') ? new RegExp(`(?<![\\w-])${pattern.source.slice(2)}`) : pattern }))

/**
 * One line per name field of `config` (any depth) holding a secret: the value of a secret-named
 * environment variable (naming the variable), or text shaped like a key (naming its kind). `!!js`
 * values are skipped: they are checked evaluated, as the row starts.
 */
export function secretNameProblems(config: unknown, env: NodeJS.ProcessEnv = process.env): string[] {
  const secrets = secretEnvironment(env).map(({ name, value }) => ({ name, value: value.trim() }))
  const problems: string[] = []
  eachString(config, (text, path) => {
    const key = path.at(-1)
    if (typeof key !== 'string' || !NAME_KEYS.has(key)) return
    const why = secretIn(text, secrets)
    if (why !== undefined) problems.push(`${formatPath(path)}: ${why}; a name is written to the session log and shown in messages as it is, so it must not hold a key: give the name itself`)
  }, (key) => typeof key !== 'string' || !(isSecretName(key) || HEADERS.test(key)))
  return problems
}

/** What makes `text` a secret, in words that quote none of it; undefined when it is none. */
function secretIn(text: string, secrets: readonly { name: string; value: string }[]): string | undefined {
  const trimmed = text.trim()
  const variable = secrets.find(({ value }) => value.length >= MIN_SECRET && (value === trimmed || text.includes(value)))
  if (variable) return `holds the value of ${variable.name}, a secret`
  const shape = NAME_KEY_SHAPES.find(({ pattern }) => pattern.test(text))
  return shape ? `looks like ${shape.kind}` : undefined
}
