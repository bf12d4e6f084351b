/**
 * Calls a tool's presenters safely. Presenters see arguments and the durable result only. A
 * missing presenter, or one that throws or returns something other than a card of the declared
 * shape, gives the generic card built from the same data; a misbehaving one is logged.
 */

import type { FrozenJson, JsonObject } from '@rein/base'
import type { Logger } from '@deepseek-ai/cordis'
import { checkCallView, checkResultView } from './card-check.ts'
import type { AnyToolDefinition } from './define-tool.ts'
import type { ToolCallView, ToolResultView } from './presentation.ts'
import type { DurableToolResult } from './result.ts'
import { isThenable } from './thenable.ts'
import { shorten } from '@rein/base'

type Definition = Readonly<AnyToolDefinition> | undefined
type Args = FrozenJson<JsonObject> | undefined

const SHORT = 120

export function describeCall(name: string, rawArguments: string, definition: Definition, args: Args, logger: Logger): ToolCallView {
  const present = definition?.presentCall
  const view = args && present && attempt('presentCall', () => present.call(definition, args), checkCallView, logger)
  return view ?? { card: 'generic', title: name, detail: shorten(rawArguments.trim(), SHORT) }
}

export function describeResult(name: string, result: DurableToolResult, definition: Definition, args: Args, logger: Logger): ToolResultView {
  const present = definition?.presentResult
  const view = args && present && attempt('presentResult', () => present.call(definition, args, result), checkResultView, logger)
  return view ?? { card: 'generic', title: name, text: textOf(result) }
}

export function summarizeResult(name: string, result: DurableToolResult, definition: Definition, args: Args, logger: Logger): string {
  const summarize = definition?.summarize
  const custom = args && summarize && attempt('summarize', () => summarize.call(definition, args, result), checkSummary, logger)
  if (custom !== undefined) return custom
  const firstLine = textOf(result).split('\n', 1)[0] ?? ''
  return `${name} ${result.isError ? 'failed' : 'succeeded'}${firstLine ? `: ${shorten(firstLine, SHORT)}` : ''}`
}

/** A presenter's answer, checked; `undefined` (and a log line) when it threw or gave a wrong shape. */
function attempt<T>(
  which: string,
  present: () => unknown,
  check: (value: unknown) => { view: T } | { problem: string },
  logger: Logger,
): T | undefined {
  try {
    const value = present()
    // A presenter returning undefined asks for the generic card; that is not a failure.
    if (value === undefined) return undefined
    if (isThenable(value)) value.then(undefined, () => {})
    const checked = check(value)
    if ('view' in checked) return checked.view
    logger.error(`${which} gave a wrong shape; showing the generic card instead: %s`, checked.problem)
  } catch (error) {
    // A broken presenter costs a nicer card, never the result itself.
    logger.error(`${which} failed; showing the generic card instead: %s`, error)
  }
  return undefined
}

function checkSummary(value: unknown): { view: string } | { problem: string } {
  return typeof value === 'string' ? { view: value } : { problem: `it returned ${typeof value}, not a string` }
}

function textOf(result: DurableToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : `[image ${part.mediaType}]`)).join('\n')
}

