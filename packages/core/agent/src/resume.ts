/**
 * Crash repair on resume: record the attempt a crash cut off (estimated: a step's request, or a
 * compaction's summary request, which a log that ends between turns can hold too), ask each tool that can
 * for the real outcome of its unpaired call (`recover`), re-run what is safe to repeat, pair the
 * rest, close the interrupted turn. A log closed without being continued is repaired the same way,
 * minus anything that would run work again.
 */

import { ReinError } from '@rein/base'
import { eventData, planRepair, repairEvents, type CoreEventData, type RepairCall, type Session } from '@rein/session'
import type { RunIdentity, ToolCallContext, ToolRegistry } from '@rein/tools'
import { repairedAttemptEnded } from './attempts.ts'
import { cutOffAttempt, type AttemptEstimator, type CutAttempt } from './cut-attempt.ts'
import { latestUserMessage, newRunId, runIdentity } from './identity.ts'
import type { Notify } from './lifecycle.ts'
import { recordedParent } from './lineage.ts'
import type { AgentOptions } from './options.ts'
import { toResultData } from './tool-calls.ts'

/** What a resume did to the log before handing the agent back. */
export interface ResumeReport {
  /** Calls paired with a `TOOL_NOT_STARTED` or `TOOL_OUTCOME_UNKNOWN` result. */
  paired: { callId: string; name: string; code: string }[]
  /** Replay-safe calls run again. */
  rerun: { callId: string; name: string; isError: boolean }[]
  /** Calls whose tool found their real outcome (`recover`). */
  recovered: { callId: string; name: string; isError: boolean }[]
  /** The interrupted turn that was closed, if any. */
  closedTurn?: number
}

type ResultData = CoreEventData['tool/result']

/**
 * How far a repair goes. `resume`: the agent goes on from the log, so replay-safe calls run again
 * and every tool with a `recover` is asked. `close`: the log is only closed (a background child
 * whose process died), so nothing runs again, and a tool whose `recover` continues the work
 * (`recoverAfterInterrupt`: a subagent's) is not asked; other tools still are — a command left
 * running is stopped by its tool's `recover`, and only that makes "stopped" true.
 */
export type RepairMode = 'resume' | 'close'

/** What a repair reads of the agent's options: where tools work, how results spill, whose run it was. */
export type RepairOptions = Pick<AgentOptions, 'name' | 'cwd' | 'workspaceRoot' | 'spillAfterChars' | 'spillAfterLines'>

/** What a repair uses: the tools it asks, what it estimates a cut-off attempt with, and whom it tells of that attempt. */
export interface RepairServices extends AttemptEstimator {
  tools: ToolRegistry
  notify: Notify
}

/** Repairs `session` if its log ends mid-turn or with a request in flight, and makes the repair durable. */
export async function repairSession(session: Session, services: RepairServices, options: RepairOptions, signal: AbortSignal = new AbortController().signal, mode: RepairMode = 'resume'): Promise<ResumeReport> {
  const { tools } = services
  const plan = planRepair(session.events, (name) => mode === 'resume' && tools.info(name)?.replaySafe === true)
  // A call run again runs for the run it belonged to: tools that decide by run (scopes, availability) decide the same.
  const identity = plan.turn === undefined ? undefined : interruptedRun(session, options, plan.turn)
  // Recorded within its step, before the repair closes it; looked for in a log that ends between
  // turns too (a compaction there was cut off), where nothing else is repaired.
  const cut = await cutOffAttempt(session, services)
  if (cut) {
    // A summary request between turns is numbered with the turn it follows, as its live attempts were.
    const turn = plan.turn ?? session.turns
    await recordCut(session, services, cut, { identity: identity ?? runOfCut(session, options, turn), turn })
  }
  const context: ToolCallContext = { sessionId: session.id, cwd: options.cwd, workspaceRoot: options.workspaceRoot ?? options.cwd, ...(identity ? { identity } : {}) }
  const limits = { chars: options.spillAfterChars, lines: options.spillAfterLines }
  const { found, report } = await settleAll(session, plan.calls, { tools, context, limits, signal, mode })
  for (const draft of repairEvents(plan, found)) session.append(draft.type, draft.data)
  for (const call of plan.calls) {
    if (found.has(call.callId)) continue
    report.paired.push({ callId: call.callId, name: call.name, code: call.action === 'not-started' ? 'TOOL_NOT_STARTED' : 'TOOL_OUTCOME_UNKNOWN' })
  }
  if (plan.turn !== undefined) report.closedTurn = plan.turn
  await session.flush()
  return report
}

interface Settling {
  tools: ToolRegistry
  context: ToolCallContext
  limits: { chars: number; lines: number }
  signal: AbortSignal
  mode: RepairMode
}

/**
 * Each call's real result where its tool can tell (`recover`, or a replay-safe run again). A resume
 * stopped meanwhile saves the results found so far and throws `REPAIR_INTERRUPTED`: the other calls
 * stay open for the next repair to ask again (a subagent being continued is interrupted, to go on
 * then). A repair that only closes the log (`close`) goes on: the tools it asks end quickly.
 */
async function settleAll(session: Session, calls: readonly RepairCall[], settling: Settling): Promise<{ found: Map<string, ResultData>; report: ResumeReport }> {
  const { tools, context, limits, signal, mode } = settling
  const found = new Map<string, ResultData>()
  const report: ResumeReport = { paired: [], rerun: [], recovered: [] }
  const stopped = () => mode === 'resume' && signal.aborted
  for (const call of calls) {
    if (stopped()) return await savedSoFar(session, found)
    const outcome = await settle(call, tools, context, signal, mode)
    // A run again the stop cut short says nothing true of the call, nor does work a recover continued
    // and the stop interrupted (a subagent: the next repair continues it); what a recover found still is.
    const cutShort = stopped() && (outcome?.how === 'rerun' || tools.info(call.name)?.recoverAfterInterrupt === true)
    if (outcome && !cutShort) {
      found.set(call.callId, await toResultData(call.callId, outcome.result, session, limits))
      report[outcome.how].push({ callId: call.callId, name: call.name, isError: outcome.result.isError })
    }
  }
  if (stopped()) return await savedSoFar(session, found)
  return { found, report }
}

/** Saves the results a stopped repair found, leaving the turn open, and throws `REPAIR_INTERRUPTED`. */
async function savedSoFar(session: Session, found: ReadonlyMap<string, ResultData>): Promise<never> {
  for (const data of found.values()) session.append('tool/result', data)
  await session.flush()
  throw new ReinError('REPAIR_INTERRUPTED', `the repair of session ${session.id} was stopped before it finished: the calls it had not settled stay open, and rein resume ${session.id} settles them`, { details: { sessionId: session.id } })
}

/**
 * Writes the cut-off attempt and tells lifecycle listeners (telemetry) of it, as the session log now
 * counts it. Saved first, then told: a repair that cannot save it tells nothing, and the next one,
 * finding it still missing, records and tells it; one that finds it saved finds no cut-off attempt.
 * So it is told once, by the process that recorded it (the killed one never told it: it was in flight).
 */
async function recordCut(session: Session, services: RepairServices, cut: CutAttempt, run: { identity: RunIdentity; turn: number }): Promise<void> {
  session.append('llm/attempt', cut.record, { ignorable: true })
  await session.flush()
  services.notify('agent/llm-end', () => repairedAttemptEnded({ identity: run.identity, turn: run.turn, step: cut.step }, services.llm(), cut.record, cut.input))
}

/**
 * The run a cut-off attempt is told for when the log names none: a compaction's summary request
 * between turns (a run the log keeps no id of), or a turn of a log from before runs had ids. A run id
 * of its own, numbered as a compaction between turns is (the turn it follows).
 */
function runOfCut(session: Session, options: RepairOptions, turn: number): RunIdentity {
  const parent = recordedParent(session.header, session.events)
  return runIdentity({ agent: options.name, sessionId: session.id, turn, runId: newRunId(), anchor: latestUserMessage(session.messages()), ...(parent ? { parent } : {}) })
}

/**
 * A started call's real result, when one can be had: its tool's `recover` first (it knows, e.g.,
 * that a subagent's session completed), else a run again when the call is replay-safe.
 */
async function settle(call: RepairCall, tools: ToolRegistry, context: ToolCallContext, signal: AbortSignal, mode: RepairMode) {
  if (call.action === 'not-started') return undefined
  if (mode === 'close' && tools.info(call.name)?.recoverAfterInterrupt === true) return undefined
  const input = { callId: call.callId, name: call.name, arguments: call.arguments, signal, context }
  const recovered = await tools.recover(input)
  if (recovered) return { how: 'recovered' as const, result: recovered }
  if (call.action !== 'rerun') return undefined
  return { how: 'rerun' as const, result: await tools.execute(input) }
}

/** The identity of the run whose turn `turn` a crash interrupted, from its `turn/start`; undefined for a log that never recorded it. */
function interruptedRun(session: Session, options: RepairOptions, turn: number): RunIdentity | undefined {
  const start = session.events.findLast((event) => event.type === 'turn/start' && eventData(event, 'turn/start').turn === turn)
  if (!start) return undefined
  const data = eventData(start, 'turn/start')
  // Logs written before runs had ids name none: such a call runs without an identity, as it did.
  if (data.runId === undefined) return undefined
  const parent = recordedParent(session.header, session.events)
  return runIdentity({ agent: options.name, sessionId: session.id, turn, runId: data.runId, anchor: data.anchor, ...(parent ? { parent } : {}) })
}
