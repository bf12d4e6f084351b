/** A walk over the strings of a config, for the checks that look at each value a row was given. */

import { isJsExpr } from '@deepseek-ai/cordis-plugin-loader'
import { isPlainObject, type ConfigPath } from './unknown-keys.ts'

/**
 * Calls `visit` with each string in `value` (any depth) and its path. A field `enter` says no to is
 * not read, nor is a `!!js` value (checked once evaluated). Rows built in code, and `!!js` values,
 * may share or hold an object: each is read once.
 */
export function eachString(value: unknown, visit: (text: string, path: ConfigPath) => void, enter: (key: string | number) => boolean = () => true): void {
  const seen = new Set<object>()
  const walk = (item: unknown, path: ConfigPath) => {
    if (typeof item === 'string') return visit(item, path)
    if (isJsExpr(item) || (!Array.isArray(item) && !isPlainObject(item)) || seen.has(item)) return
    seen.add(item)
    const entries: [string | number, unknown][] = Array.isArray(item) ? item.map((each, index) => [index, each]) : Object.entries(item)
    for (const [key, each] of entries) if (enter(key)) walk(each, [...path, key])
  }
  walk(value, [])
}
