/**
 * Calls a tool's presenters safely. Presenters see arguments and the durable result only,
 * and any failure or missing presenter falls back to a generic card built from the same data.
 */

import type { FrozenJson, JsonObject } from '@rein/base'
import type { AnyToolDefinition } from './define-tool.ts'
import type { ToolCallView, ToolResultView } from './presentation.ts'
import type { DurableToolResult } from './result.ts'

type Definition = AnyToolDefinition | undefined
type Args = FrozenJson<JsonObject> | undefined

const SHORT = 120

export function describeCall(name: string, rawArguments: string, definition: Definition, args: Args): ToolCallView {
  const view = args && attempt(() => definition?.presentCall?.(args))
  return view ?? { card: 'generic', title: name, detail: shorten(rawArguments.trim()) }
}

export function describeResult(name: string, result: DurableToolResult, definition: Definition, args: Args): ToolResultView {
  const view = args && attempt(() => definition?.presentResult?.(args, result))
  return view ?? { card: 'generic', title: name, text: textOf(result) }
}

export function summarizeResult(name: string, result: DurableToolResult, definition: Definition, args: Args): string {
  const custom = args && attempt(() => definition?.summarize?.(args, result))
  if (typeof custom === 'string') return custom
  const firstLine = textOf(result).split('\n', 1)[0] ?? ''
  return `${name} ${result.isError ? 'failed' : 'succeeded'}${firstLine ? `: ${shorten(firstLine)}` : ''}`
}

function attempt<T>(present: () => T | undefined): T | undefined {
  try {
    return present()
  } catch {
    // A broken presenter costs a nicer card, never the result itself.
    return undefined
  }
}

function textOf(result: DurableToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : `[image ${part.mediaType}]`)).join('\n')
}

function shorten(text: string): string {
  return text.length > SHORT ? `${text.slice(0, SHORT - 1)}…` : text
}
