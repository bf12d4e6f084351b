/**
 * Errors said in the built-in composition's terms. There is no cordis.yml to edit there: what the
 * agent or a plugin says of a row was given as a flag (`--max-cost`) or an environment variable
 * (`OPENAI_BASE_URL`), or needs a cordis.yml written. Apart from composition.ts, so main.ts can
 * word an error without loading the stack (`rein --help` loads none).
 */

import { isReinError, ReinError } from '@rein/base'

/** Where prices go when the built-in composition has none for a model: it has no @rein/llm row to edit. */
export const BUILT_IN_PRICES = 'the built-in composition has none for it: write a cordis.yml with prices on its @rein/llm row'

/** `MAX_COST_UNPRICED` on the built-in composition, where only `--max-cost` sets maxCost: drop the flag, or write a cordis.yml with prices. */
export function maxCostInBuiltInTerms(source: string, error: unknown): unknown {
  if (source !== 'built-in' || !isReinError(error, 'MAX_COST_UNPRICED')) return error
  // The agent's `maxCost is set but <where> <route> has no price (…)`: the route is kept, the advice replaced.
  const at = error.message.indexOf(' has no price')
  if (at < 0) return error
  const advice = 'the built-in composition has none for it; drop --max-cost, or write a cordis.yml with prices on its @rein/llm row'
  return new ReinError('MAX_COST_UNPRICED', `${error.message.slice(0, at)} has no price, so cost cannot be counted: ${advice}`, { cause: error, ...(error.details ? { details: error.details } : {}) })
}

/** The agent's advice at the end of a refusal for length when the model's context window is not known. */
const AGENT_WINDOW_ADVICE = " (give it contextWindow in its provider's models)"

/**
 * A provider's refusal for length (`CONTEXT_WINDOW_EXCEEDED`) with the built-in composition's
 * `advice` for the route in place of the agent's, which names a row the user does not have.
 */
export function windowRefusalInBuiltInTerms(message: string, advice: string | undefined): string {
  if (advice === undefined || !message.endsWith(AGENT_WINDOW_ADVICE)) return message
  return `${message.slice(0, -AGENT_WINDOW_ADVICE.length)}: ${advice}`
}

/** The built-in composition's OpenAI row: OPENAI_BASE_URL is its baseURL. */
const OPENAI_ROW = 'row "openai" (@rein/llm-openai): config: '

/**
 * A built-in composition's problem with its OpenAI row's baseURL, which came from OPENAI_BASE_URL:
 * said of the variable, with the value to set it to, not of a `baseURL:` the user has nowhere to write.
 */
export function baseUrlInBuiltInTerms(message: string, env: NodeJS.ProcessEnv): string {
  if (!env.OPENAI_BASE_URL || !message.startsWith('the built-in composition')) return message
  return message.split('\n').map((line) => {
    const at = line.indexOf(OPENAI_ROW)
    const problem = at < 0 ? '' : line.slice(at + OPENAI_ROW.length)
    if (!problem.startsWith('baseURL')) return line
    const worded = problem.replace(/^baseURL\b/, 'OPENAI_BASE_URL').replaceAll('write baseURL: ', 'set OPENAI_BASE_URL=').replaceAll('e.g. baseURL: ', 'e.g. OPENAI_BASE_URL=')
    return `${line.slice(0, at)}${worded}`
  }).join('\n')
}

/** The hints @rein/llm-openai ends a failure with that point at `baseURL`: a host that did not resolve, a path with nothing at it. */
const HOST_HINT = /; check the host in baseURL( and the network)?/g
const PATH_HINT = /\? check baseURL\)/g

/**
 * A line about a built-in composition's provider failure that points at `baseURL`, which the user
 * has nowhere to write: said of OPENAI_BASE_URL when the URL came from it, else of the network (a
 * provider's own host that did not resolve).
 */
export function baseUrlHintsInBuiltInTerms(line: string, env: NodeJS.ProcessEnv): string {
  if (!line.includes('baseURL')) return line
  const fromVariable = env.OPENAI_BASE_URL !== undefined && URL.canParse(env.OPENAI_BASE_URL) && line.includes(new URL(env.OPENAI_BASE_URL).origin)
  return line
    .replace(HOST_HINT, fromVariable ? '; check the host in OPENAI_BASE_URL, and the network' : '; check the network and its DNS: the provider\'s own host did not resolve')
    .replace(PATH_HINT, fromVariable ? '? check OPENAI_BASE_URL)' : '?)')
}
