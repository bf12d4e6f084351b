/**
 * `UNKNOWN_PROVIDER` in the terms of what named the provider: the agents row of the cordis.yml
 * (its file, row and field, as compose reports a row's problem) or `--provider`; with the nearest
 * loaded provider when the name is one typo away from it.
 */

import type { Composition } from '@rein/compose'
import { closest, isReinError, ReinError } from '@rein/base'

/** What named the route: the flag, or the stored session (a resume keeps the provider its log recorded). */
export interface ProviderSource {
  /** The composition file loaded, or `built-in`. */
  source: string
  composition: Composition
  /** `--provider`, when given. */
  flag: string | undefined
  /** Whether the agent resumes a stored session. */
  resuming: boolean
}

/** `error` reworded when it is `UNKNOWN_PROVIDER` for a route a cordis.yml or `--provider` named; anything else as it is. */
export function unknownProviderIn(from: ProviderSource, error: unknown): unknown {
  if (!isReinError(error, 'UNKNOWN_PROVIDER')) return error
  const { where, provider, loaded } = error.details ?? {}
  if (typeof where !== 'string' || typeof provider !== 'string' || !Array.isArray(loaded)) return error
  const served = loaded.filter((name): name is string => typeof name === 'string')
  const near = closest(provider, served)
  const list = served.length > 0 ? served.join(', ') : 'none'
  if (where === 'provider' && from.flag !== undefined) {
    const advice = near ? `did you mean ${near}? (loaded: ${list})` : `loaded: ${list} (add its provider row, or pick one of those)`
    return new ReinError('UNKNOWN_PROVIDER', `--provider ${provider}: no loaded provider serves "${provider}"; ${advice}`, { cause: error, details: error.details })
  }
  const row = agentsRow(from)
  if (row === undefined || (where === 'provider' && from.resuming)) return error
  const advice = near ? `did you mean ${near}? (loaded: ${list}; a provider row's config.provider names it)` : `loaded: ${list} (add its provider row, or name one of those)`
  // `where` names the route as the agent's options do: `provider`, `fallbacks[0]`, `compaction.summaryRoute`.
  const field = where === 'provider' ? 'config.provider' : `config.${where}.provider`
  const problem = `row "${row.id}" (${row.name}): ${field}: no loaded provider serves "${provider}"; ${advice}`
  return new ReinError('UNKNOWN_PROVIDER', `${from.source} has a problem:\n  - ${problem}`, { cause: error, details: { ...error.details, path: from.source, problems: [problem] } })
}

/** The cordis.yml's one enabled `@rein/agent` row, which the new agent's routes come from. */
function agentsRow(from: ProviderSource): { id: string; name: string } | undefined {
  if (from.source === 'built-in') return undefined
  const rows = from.composition.rows().filter((row) => row.name === '@rein/agent' && !row.disabled)
  return rows.length === 1 ? rows[0] : undefined
}
