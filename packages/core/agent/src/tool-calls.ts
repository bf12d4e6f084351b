/**
 * Runs one answer's tool calls. Consecutive concurrency-safe calls run in a bounded pool; any other
 * call runs alone. Each batch's intents are made durable before any body runs, and results are
 * recorded in the model's order whatever order they finish in.
 */

import { join } from 'node:path'
import { isReinError, messageOf } from '@rein/base'
import type { ToolCallBlock } from '@rein/llm'
import type { CoreEventData, Session } from '@rein/session'
import type { ApprovalService, RunIdentity, ToolCallView, ToolInfo, ToolRegistry, ToolResult, ToolResultView } from '@rein/tools'
import type { AgentEvent } from './events.ts'
import type { Notify } from './lifecycle.ts'
import { exceeds, preview, spillOpener, spillResult, type SpillLimits } from './spill.ts'
import type { TurnState } from './turn-state.ts'

type ResultData = CoreEventData['tool/result']

export interface ToolRunContext {
  session: Session
  state: TurnState
  tools: ToolRegistry
  signal: AbortSignal
  cwd: string
  workspaceRoot: string
  identity: RunIdentity
  visible: ((name: string) => boolean) | undefined
  maxParallel: number
  spill: SpillLimits
  emit: (event: AgentEvent) => void
  notify: Notify
  /** Where a call that needs approval asks (the registry is held outside cordis's tracing proxy). */
  approval: () => ApprovalService | undefined
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
    let onlyReads = true
    for (const call of batch) {
      const info = context.tools.info(call.name)
      context.state.intent(call, info?.replaySafe === true)
      onlyReads &&= info !== undefined && readsOnly(info)
    }
    try {
      // Bodies that only read and may run twice need their intents only where a kill cannot lose
      // them; a power loss that does costs a rerun (or a "not started" result), and no effect goes
      // unrecorded. Anything else waits for the disk.
      await (onlyReads ? context.session.write() : context.session.flush())
    } catch (error) {
      pairRest(context, 'TOOL_NOT_STARTED', 'the session could not be saved', false)
      throw new IntentNotDurable(error)
    }
    await runBatch(batch, context, await spillFolderOf(context.session))
  }
}

/** Replay-safe and changing nothing: pure, or declared to read only. */
function readsOnly(info: ToolInfo): boolean {
  return info.replaySafe && info.effects.every((effect) => effect === 'read')
}

/**
 * The folder spills go to, for tools that let the model read them back; none when the session has
 * no folder. Its path, where the store can say it without making the folder: a batch then costs no
 * file-system call (a session's own spills make it, spill.ts).
 */
async function spillFolderOf(session: Session): Promise<string | undefined> {
  try {
    // A store that keeps folders but cannot name one unmade: make it.
    return join(session.folderPath() ?? await session.folder(), 'spill')
  } catch {
    return undefined
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

/** A call its tool asked to leave without a result under an interrupt: the next resume asks its `recover`. */
interface LeftOpen {
  leftOpen: ResultData
}

async function runBatch(batch: readonly ToolCallBlock[], context: ToolRunContext, spillFolder: string | undefined): Promise<void> {
  const done: (ResultData | LeftOpen | undefined)[] = Array.from({ length: batch.length }, () => undefined)
  let committed = 0
  let next = 0
  const commit = () => {
    for (let data = done[committed]; data !== undefined; data = done[committed]) {
      const call = batch[committed++] as ToolCallBlock
      if ('leftOpen' in data) {
        context.state.leaveOpen(call)
        context.emit(toolEnd(context, call, data.leftOpen, true))
      } else {
        recordResult(context, call, data)
      }
    }
  }
  const worker = async () => {
    for (let position = next++; position < batch.length; position = next++) {
      const call = batch[position] as ToolCallBlock
      done[position] = await runOne(call, context, spillFolder)
      commit()
    }
  }
  await Promise.all(Array.from({ length: Math.min(context.maxParallel, batch.length) }, worker))
}

/** One call: its card, its lifecycle events, the registry's pipeline, and its result as the log keeps it. */
async function runOne(call: ToolCallBlock, context: ToolRunContext, spillFolder: string | undefined): Promise<ResultData | LeftOpen> {
  const { tools, session, state, identity, notify } = context
  context.emit(toolStart(tools, call))
  const startedAt = Date.now()
  const step = state.step ?? 0
  const started = () => ({ identity, turn: state.turn, step, name: call.name, callId: call.id, effects: tools.info(call.name)?.effects ?? [], startedAt, arguments: call.arguments })
  notify('agent/tool-start', started)
  const result = await tools.execute({
    callId: call.id,
    name: call.name,
    arguments: call.arguments,
    signal: context.signal,
    approval: context.approval,
    context: {
      sessionId: session.id,
      cwd: context.cwd,
      workspaceRoot: context.workspaceRoot,
      identity,
      spill: spillOpener(session, call.id),
      ...(spillFolder ? { spillFolder } : {}),
      ...(context.visible ? { visible: context.visible } : {}),
    },
  })
  const endedAt = Date.now()
  // What the model reads: a long result is its preview once spilled, never the whole output.
  const data = await toResultData(call.id, result, session, context.spill)
  notify('agent/tool-end', () => {
    const text = () => data.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n')
    return Object.assign(started(), { endedAt, durationMs: endedAt - startedAt, isError: result.isError, ...(result.isError ? { code: result.error.code } : {}), result: text })
  })
  return result.isError && leftForRecover(context, call.name) ? { leftOpen: data } : data
}

/** An interrupt (not a cancel) ended a call whose tool can continue its work on resume (`recoverAfterInterrupt`). */
function leftForRecover(context: ToolRunContext, name: string): boolean {
  return context.signal.aborted && isReinError(context.signal.reason, 'INTERRUPTED') && context.tools.info(name)?.recoverAfterInterrupt === true
}

/** Pairs the calls left without a result, telling listeners about each. */
export function pairRest(context: Pick<ToolRunContext, 'state' | 'tools' | 'emit'>, code: string, reason: string, bodiesRan = true) {
  for (const { call, data } of context.state.pairRest(code, reason, bodiesRan)) context.emit(toolEnd(context, call, data))
}

function recordResult(context: ToolRunContext, call: ToolCallBlock, data: ResultData) {
  context.state.result(data)
  context.emit(toolEnd(context, call, data))
}

/*
 * A card is built when a listener first reads it, once: an agent nobody listens to runs no
 * presenter, nor does a subagent's runner, which listens to its child for the progress and reads
 * no card (what it relays reaches the parent's listeners, if any).
 */

function toolStart(tools: ToolRegistry, call: ToolCallBlock): Extract<AgentEvent, { type: 'tool-start' }> {
  let card: ToolCallView | undefined
  return {
    type: 'tool-start',
    callId: call.id,
    name: call.name,
    get card() {
      return card ??= tools.presentCall(call.name, call.arguments)
    },
  }
}

function toolEnd(context: Pick<ToolRunContext, 'tools'>, call: ToolCallBlock, data: ResultData, resumable = false): Extract<AgentEvent, { type: 'tool-end' }> {
  let card: ToolResultView | undefined
  return {
    type: 'tool-end',
    callId: call.id,
    name: call.name,
    isError: data.isError,
    ...(data.code ? { code: data.code } : {}),
    ...(resumable ? { resumable: true } : {}),
    get card() {
      const durable = { isError: data.isError, content: data.content, ...(data.meta !== undefined ? { meta: data.meta } : {}) }
      return card ??= context.tools.presentResult(call.name, call.arguments, durable)
    },
  }
}

/**
 * A registry result as the log keeps it: no execution-local value, and text past the spill limits
 * saved whole in the session's folder with a preview in its place.
 */
export async function toResultData(callId: string, result: ToolResult, session: Session, limits: SpillLimits): Promise<ResultData> {
  const data: ResultData = {
    callId,
    content: [...result.content],
    isError: result.isError,
    ...(result.isError ? { code: result.error.code } : {}),
    ...(!result.isError && result.meta !== undefined ? { meta: result.meta as never } : {}),
  }
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n')
  if (!exceeds(text, limits)) return data
  const images = result.content.filter((part) => part.type !== 'text')
  try {
    const spill = await spillResult(session, callId, text)
    return { ...data, content: [{ type: 'text', text: preview(text, limits, spill) }, ...images], spill }
  } catch (error) {
    // Nowhere to save it: the model still gets the preview, and is told the rest is gone.
    return { ...data, content: [{ type: 'text', text: preview(text, limits, { error: messageOf(error) }) }, ...images] }
  }
}
