/**
 * Runs one assistant message's tool calls. Consecutive concurrency-safe calls run in a bounded pool;
 * any other call runs alone. Each batch's intents are made durable before any body runs, and
 * results are appended in the model's order whatever order they finish in.
 */

import type { ToolCallBlock } from '@rein/llm'
import type { CoreEventData, Session } from '@rein/session'
import type { ToolRegistry, ToolResult } from '@rein/tools'
import type { AgentEvent } from './events.ts'

type ResultData = CoreEventData['tool/result']

export interface ToolRunContext {
  session: Session
  tools: ToolRegistry
  signal: AbortSignal
  cwd: string
  maxParallel: number
  maxResultChars: number
  emit(event: AgentEvent): void
}

/** Thrown when intents could not be made durable; the calls were paired as not started. */
export class IntentNotDurable extends Error {
  constructor(readonly reason: unknown) {
    super('tool call intents could not be saved', { cause: reason })
  }
}

export async function runToolCalls(calls: readonly ToolCallBlock[], context: ToolRunContext): Promise<void> {
  let index = 0
  while (index < calls.length) {
    if (context.signal.aborted) {
      for (const call of calls.slice(index)) appendResult(context, call, unrun(call, 'ABORTED_BEFORE_DISPATCH', `${call.name} was not started: the turn was cancelled`))
      return
    }
    const batch = nextBatch(calls, index, context.tools)
    index += batch.length
    for (const call of batch) {
      context.session.append('tool/call', { callId: call.id, name: call.name, arguments: call.arguments, replaySafe: context.tools.get(call.name)?.replaySafe === true })
    }
    try {
      await context.session.flush()
    } catch (error) {
      for (const call of batch) appendResult(context, call, unrun(call, 'TOOL_NOT_STARTED', `${call.name} did not run: the session could not be saved`))
      for (const call of calls.slice(index)) appendResult(context, call, unrun(call, 'TOOL_NOT_STARTED', `${call.name} did not run: the session could not be saved`))
      throw new IntentNotDurable(error)
    }
    await runBatch(batch, context)
  }
}

/** A safe call starts a run of consecutive safe calls; anything else is a batch of one. */
function nextBatch(calls: readonly ToolCallBlock[], start: number, tools: ToolRegistry): ToolCallBlock[] {
  const safe = (call: ToolCallBlock) => tools.isConcurrencySafe(call.name, call.arguments)
  if (!safe(calls[start]!)) return [calls[start]!]
  let end = start + 1
  while (end < calls.length && safe(calls[end]!)) end++
  return calls.slice(start, end)
}

async function runBatch(batch: readonly ToolCallBlock[], context: ToolRunContext): Promise<void> {
  const done: (ResultData | undefined)[] = Array.from({ length: batch.length }, () => undefined)
  let committed = 0
  let next = 0
  const commit = () => {
    while (committed < batch.length && done[committed]) {
      appendResult(context, batch[committed]!, done[committed]!)
      committed++
    }
  }
  const worker = async () => {
    while (next < batch.length) {
      const position = next++
      const call = batch[position]!
      context.emit({ type: 'tool-start', callId: call.id, name: call.name, card: context.tools.presentCall(call.name, call.arguments) })
      const result = await context.tools.execute({
        callId: call.id,
        name: call.name,
        arguments: call.arguments,
        signal: context.signal,
        context: { sessionId: context.session.id, cwd: context.cwd },
      })
      done[position] = toResultData(call, result, context.maxResultChars)
      commit()
    }
  }
  await Promise.all(Array.from({ length: Math.min(context.maxParallel, batch.length) }, worker))
}

function appendResult(context: ToolRunContext, call: ToolCallBlock, data: ResultData) {
  context.session.append('tool/result', data)
  context.emit({
    type: 'tool-end',
    callId: call.id,
    name: call.name,
    isError: data.isError,
    ...(data.code ? { code: data.code } : {}),
    card: context.tools.presentResult(call.name, call.arguments, { isError: data.isError, content: data.content, ...(data.meta !== undefined ? { meta: data.meta } : {}) }),
  })
}

function toResultData(call: ToolCallBlock, result: ToolResult, maxChars: number): ResultData {
  const length = result.content.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : 0), 0)
  return {
    callId: call.id,
    content: [...result.content],
    isError: result.isError,
    ...(result.isError ? { code: result.error.code } : {}),
    ...(!result.isError && result.meta !== undefined ? { meta: result.meta as never } : {}),
    ...(length > maxChars ? { modelChars: maxChars } : {}),
  }
}

/** A result for a call that never ran. */
export function unrun(call: ToolCallBlock, code: string, message: string): ResultData {
  return { callId: call.id, content: [{ type: 'text', text: `Error: ${message}` }], isError: true, code }
}
