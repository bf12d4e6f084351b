/**
 * Runs one answer's tool calls. Consecutive concurrency-safe calls run in a bounded pool; any other
 * call runs alone. Each batch's intents are made durable before any body runs, and results are
 * recorded in the model's order whatever order they finish in.
 */

import type { ToolCallBlock } from '@rein/llm'
import type { CoreEventData, Session } from '@rein/session'
import type { ToolRegistry, ToolResult } from '@rein/tools'
import type { AgentEvent } from './events.ts'
import type { TurnState } from './turn-state.ts'

type ResultData = CoreEventData['tool/result']

export interface ToolRunContext {
  session: Session
  state: TurnState
  tools: ToolRegistry
  signal: AbortSignal
  cwd: string
  maxParallel: number
  maxResultChars: number
  emit: (event: AgentEvent) => void
}

/** Thrown when intents could not be made durable; the calls were paired as not started. */
export class IntentNotDurable extends Error {
  constructor(readonly reason: unknown) {
    super('tool call intents could not be saved', { cause: reason })
  }
}

export async function runToolCalls(calls: readonly ToolCallBlock[], context: ToolRunContext): Promise<void> {
  for (const batch of batches(calls, context.tools)) {
    if (context.signal.aborted) {
      pairRest(context, 'ABORTED_BEFORE_DISPATCH', 'the turn was cancelled')
      return
    }
    for (const call of batch) context.state.intent(call, context.tools.get(call.name)?.replaySafe === true)
    try {
      await context.session.flush()
    } catch (error) {
      pairRest(context, 'TOOL_NOT_STARTED', 'the session could not be saved', false)
      throw new IntentNotDurable(error)
    }
    await runBatch(batch, context)
  }
}

/** Consecutive concurrency-safe calls form one batch; any other call is a batch of its own. */
function batches(calls: readonly ToolCallBlock[], tools: ToolRegistry): ToolCallBlock[][] {
  const groups: { safe: boolean; calls: ToolCallBlock[] }[] = []
  for (const call of calls) {
    const safe = tools.isConcurrencySafe(call.name, call.arguments)
    const last = groups.at(-1)
    if (safe && last?.safe) last.calls.push(call)
    else groups.push({ safe, calls: [call] })
  }
  return groups.map((group) => group.calls)
}

async function runBatch(batch: readonly ToolCallBlock[], context: ToolRunContext): Promise<void> {
  const done: (ResultData | undefined)[] = Array.from({ length: batch.length }, () => undefined)
  let committed = 0
  let next = 0
  const commit = () => {
    for (let data = done[committed]; data !== undefined; data = done[committed]) {
      recordResult(context, batch[committed++] as ToolCallBlock, data)
    }
  }
  const worker = async () => {
    for (let position = next++; position < batch.length; position = next++) {
      const call = batch[position] as ToolCallBlock
      context.emit({ type: 'tool-start', callId: call.id, name: call.name, card: context.tools.presentCall(call.name, call.arguments) })
      const result = await context.tools.execute({
        callId: call.id,
        name: call.name,
        arguments: call.arguments,
        signal: context.signal,
        context: { sessionId: context.session.id, cwd: context.cwd },
      })
      done[position] = toResultData(call.id, result, context.maxResultChars)
      commit()
    }
  }
  await Promise.all(Array.from({ length: Math.min(context.maxParallel, batch.length) }, worker))
}

/** Pairs the calls left without a result, telling listeners about each. */
export function pairRest(context: Pick<ToolRunContext, 'state' | 'tools' | 'emit'>, code: string, reason: string, bodiesRan = true) {
  for (const { call, data } of context.state.pairRest(code, reason, bodiesRan)) context.emit(toolEnd(context, call, data))
}

function recordResult(context: ToolRunContext, call: ToolCallBlock, data: ResultData) {
  context.state.result(data)
  context.emit(toolEnd(context, call, data))
}

function toolEnd(context: Pick<ToolRunContext, 'tools'>, call: ToolCallBlock, data: ResultData): AgentEvent {
  const durable = { isError: data.isError, content: data.content, ...(data.meta !== undefined ? { meta: data.meta } : {}) }
  return {
    type: 'tool-end',
    callId: call.id,
    name: call.name,
    isError: data.isError,
    ...(data.code ? { code: data.code } : {}),
    card: context.tools.presentResult(call.name, call.arguments, durable),
  }
}

/** A registry result as the log keeps it: no execution-local value; the model's cap recorded when it applies. */
export function toResultData(callId: string, result: ToolResult, maxChars: number): ResultData {
  const length = result.content.reduce((sum, part) => sum + (part.type === 'text' ? part.text.length : 0), 0)
  return {
    callId,
    content: [...result.content],
    isError: result.isError,
    ...(result.isError ? { code: result.error.code } : {}),
    ...(!result.isError && result.meta !== undefined ? { meta: result.meta as never } : {}),
    ...(length > maxChars ? { modelChars: maxChars } : {}),
  }
}
