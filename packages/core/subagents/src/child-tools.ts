/** Which tools a child gets: its profile's allow-list, narrowed by the call's `tools`, as concrete names. */

import { visibleTools } from '@rein/agent'
import { ReinError } from '@rein/base'
import type { ToolRegistry } from '@rein/tools'

/** A pattern with no glob characters names one tool: one not registered is a mistake worth reporting. */
const GLOB = /[*?[\]{}()!]/

/**
 * The names the child may use (the parent's own allow-list narrows them again, in `ctx.agents`),
 * or undefined when neither list says anything: the child then has exactly the parent's tools.
 * Both lists are turned into names now, because `ctx.agents.create` takes one list.
 */
export function childTools(registry: ToolRegistry, lists: readonly (readonly string[] | undefined)[]): string[] | undefined {
  const given = lists.filter((list): list is readonly string[] => list !== undefined)
  if (given.length === 0) return undefined
  const tests = given.map((list) => visibleTools([...list]))
  return registry.list().filter((name) => tests.every((test) => test === undefined || test(name)))
}

/** Names in `patterns` that no registered tool has, so a typo fails loudly instead of narrowing to nothing. */
export function unknownNames(registry: ToolRegistry, patterns: readonly string[]): string[] {
  const known = new Set(registry.list())
  return patterns.map((pattern) => pattern.replace(/^!/, '')).filter((name) => !GLOB.test(name) && !known.has(name))
}

/** Whether the child's tools can only read: none declares `write` or `exec`. */
export function readOnly(registry: ToolRegistry, names: readonly string[]): boolean {
  return names.every((name) => !(registry.info(name)?.effects ?? []).some((effect) => effect === 'write' || effect === 'exec'))
}

/** `INVALID_ARGS` for the call's own `tools` naming a tool that does not exist. */
export function checkCallTools(registry: ToolRegistry, tools: readonly string[] | undefined): void {
  if (tools === undefined) return
  const unknown = unknownNames(registry, tools)
  if (unknown.length > 0) {
    throw new ReinError('INVALID_ARGS', `tools names no such tool: ${unknown.join(', ')}; registered tools: ${registry.list().join(', ') || 'none'}`, { details: { unknown } })
  }
}
