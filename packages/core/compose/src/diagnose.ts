/**
 * After a load, finds every row that is not running and says why, naming the row and the field:
 * the loader itself only logs these, and a failed row would otherwise pass unnoticed.
 */

import type { Entry, EntryTree } from '@deepseek-ai/cordis-plugin-loader'

// FiberState is a `declare const enum` in cordis's typings; isolatedModules needs the numbers.
const PENDING = 0

export async function diagnose(tree: EntryTree): Promise<string[]> {
  const problems: string[] = []
  for (const entry of tree.entries()) {
    if (entry.disabled) continue
    const label = `row "${entry.options.id}" (${entry.options.name})`
    if (!entry.fiber) {
      problems.push(`${label}: ${await whyNotLoaded(tree, entry)}`)
      continue
    }
    try {
      await entry.fiber.await()
    } catch (error) {
      problems.push(...describeFailure(error).map((line) => `${label}: ${line}`))
      continue
    }
    if (entry.fiber.state === PENDING) {
      const missing = Object.keys(entry.fiber.inject).filter((name) => tree.ctx.root.get(name) === undefined)
      const services = missing.map((name) => `"${name}"`).join(', ')
      problems.push(`${label}: waits for ${missing.length === 1 ? 'the service' : 'services'} ${services || '(unknown)'} that no row provides; add the row that provides it`)
    }
  }
  return problems
}

async function whyNotLoaded(tree: EntryTree, entry: Entry): Promise<string> {
  let exports: unknown
  try {
    exports = await tree.import(entry.options.name)
  } catch (error) {
    return `cannot load the plugin: ${firstLine(error)}`
  }
  const plugin = tree.ctx.loader.unwrapExports(exports) as unknown
  const isPlugin = typeof plugin === 'function' || (typeof plugin === 'object' && plugin !== null && typeof (plugin as { apply?: unknown }).apply === 'function')
  return isPlugin
    ? 'the plugin failed to start; see the log'
    : 'the module is not a cordis plugin (export a function, a class, or an object with apply)'
}

/** One line per problem; a config ValidationError becomes `config.<field>: <problem>` per issue. */
function describeFailure(error: unknown): string[] {
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof Error && error.name === 'ValidationError') {
    return message.split('\n').slice(1).map((line) => {
      const issue = /^\s*- (.*?)(?: \(at (.+)\))?$/.exec(line)
      if (!issue) return line.trim()
      const [, text = '', path] = issue
      if (!path) return `config: ${text}`
      return `config.${path}: ${text.replace(`$.${path} `, '')}`
    })
  }
  return [`failed to start: ${firstLine(error)}`]
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.split('\n', 1)[0] ?? message
}
