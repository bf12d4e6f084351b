/**
 * The error a row's start throws in place of what cordis would: the loader logs it as it is, and
 * what cordis throws for a config quotes it (a schema's `expected number but got <value>`, a `!!js`
 * engine error's text), which may be a secret. This one quotes nothing of it, and names the row.
 */

import type { EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import { maskText, ReinError, secretValues } from '@rein/base'
import { rowLabel } from './row-plugin.ts'

/**
 * `CONFIG_INVALID` whose message is the problem lines (`config.start: …`), each naming the row, with
 * the values of secret-named environment variables masked; no `cause`. What the loader logs for the
 * row then says what the composition's report says.
 */
export function rowFailure(row: Pick<EntryOptions, 'id' | 'name'>, problems: readonly string[]): ReinError {
  const secrets = secretValues(process.env)
  const masked = problems.map((line) => maskText(line, secrets))
  const failure = new ReinError('CONFIG_INVALID', masked.map((line) => `${rowLabel(row)}: ${line}`).join('\n'), { details: { problems: masked } })
  failures.set(failure, masked)
  return failure
}

/** Only this module's own: a plugin may throw a `CONFIG_INVALID` of its own, which is said as thrown. */
const failures = new WeakMap<object, string[]>()

/** The problem lines of a `rowFailure` (without the row), else undefined. */
export function rowFailureProblems(error: unknown): string[] | undefined {
  return typeof error === 'object' && error !== null ? failures.get(error) : undefined
}
