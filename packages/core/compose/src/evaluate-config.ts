/**
 * A row's config with its `!!js` values evaluated, as the loader evaluates them when the row
 * (re)starts. Used before a reload is applied: a restart whose new config fails is only logged by
 * the loader, and the row runs on with its old config while the reload would look applied. And
 * after a row failed to start: the loader's error does not say which value threw.
 */

import { thrownMessage } from '@rein/base'
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
        return evaluate(value.__jsExpr)
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

/** What a problem line says after the field of a `!!js` value that threw. */
export function expressionThrew(error: unknown): string {
  return `the !!js expression threw: ${thrownMessage(error) ?? 'something with no message'}`
}
