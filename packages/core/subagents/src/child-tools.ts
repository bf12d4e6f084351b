/** Which tools a child gets: its profile's allow-list, narrowed by the call's `tools`, as concrete names. */

import { visibleTools } from '@rein/agent'
import { ReinError } from '@rein/base'
import type { RunIdentity, ToolRegistry } from '@rein/tools'

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

/**
 * The tools the calling run is offered now: its allow-list (`canUse`, its agent's) and each tool's
 * own availability (`recall_result` only once its session was compacted, `subagent` only above
 * `maxDepth`). What a call's `tools` may name, and what an error about them lists.
 */
export function callerTools(registry: ToolRegistry, canUse: ((name: string) => boolean) | undefined, identity: RunIdentity): string[] {
  return registry.list().filter((name) => (canUse?.(name) ?? true) && offered(registry, name, identity))
}

function offered(registry: ToolRegistry, name: string, identity: RunIdentity): boolean {
  const check = registry.get(name)?.availableTo
  if (check === undefined) return true
  try {
    return check(identity) === true
  } catch {
    return false
  }
}

/**
 * `INVALID_ARGS` for the call's own `tools` when it is malformed, or names a tool the caller does
 * not have (`own`): the child would silently go without it, as its tools only narrow the caller's.
 * An exclusion may name any registered tool (excluding one the caller lacks changes nothing), but
 * not a missing one: a typo there would leave the tool meant in.
 */
export function checkCallTools(registry: ToolRegistry, tools: readonly string[] | undefined, own: readonly string[]): void {
  if (tools === undefined) return
  const yours = `your tools: ${own.join(', ') || 'none'}`
  try {
    visibleTools([...tools])
  } catch (error) {
    throw new ReinError('INVALID_ARGS', `tools must be tool names or globs, "!" before one to exclude it (e.g. ["${own[0] ?? 'read'}", "!${own[1] ?? 'write'}"]), [] for none, or left out for all yours: ${JSON.stringify(tools)} is not; ${yours}`, { cause: error, details: { tools } })
  }
  const registered = new Set(registry.list())
  const mine = new Set(own)
  const unknown = tools.filter((pattern) => !GLOB.test(pattern.replace(/^!/, '')) && !(pattern.startsWith('!') ? registered.has(pattern.slice(1)) || mine.has(pattern.slice(1)) : mine.has(pattern)))
  if (unknown.length > 0) {
    const names = unknown.map((pattern) => pattern.replace(/^!/, ''))
    throw new ReinError('INVALID_ARGS', `tools names ${names.map((name) => `"${name}"`).join(', ')}, which ${names.length === 1 ? 'is not one' : 'are not'} of your tools: a subagent gets only tools you have; ${yours}`, { details: { unknown: names, own } })
  }
}
