/** Crash repair on resume: re-run what is safe to repeat, pair the rest, close the interrupted turn. */

import { planRepair, repairEvents, type CoreEventData, type Session } from '@rein/session'
import type { ToolRegistry } from '@rein/tools'
import type { AgentOptions } from './options.ts'
import { toResultData } from './tool-calls.ts'

/** What a resume did to the log before handing the agent back. */
export interface ResumeReport {
  /** Calls paired with a `TOOL_NOT_STARTED` or `TOOL_OUTCOME_UNKNOWN` result. */
  paired: { callId: string; name: string; code: string }[]
  /** Replay-safe calls run again. */
  rerun: { callId: string; name: string; isError: boolean }[]
  /** The interrupted turn that was closed, if any. */
  closedTurn?: number
}

/** Repairs `session` if its log ends mid-turn, and makes the repair durable. */
export async function repairSession(session: Session, tools: ToolRegistry, options: AgentOptions): Promise<ResumeReport> {
  const plan = planRepair(session.events, (name) => tools.get(name)?.replaySafe === true)
  const reruns = new Map<string, CoreEventData['tool/result']>()
  const report: ResumeReport = { paired: [], rerun: [] }
  for (const call of plan.calls) {
    if (call.action !== 'rerun') continue
    const result = await tools.execute({ callId: call.callId, name: call.name, arguments: call.arguments, signal: new AbortController().signal, context: { sessionId: session.id, cwd: options.cwd } })
    reruns.set(call.callId, toResultData(call.callId, result, options.maxToolResultChars))
    report.rerun.push({ callId: call.callId, name: call.name, isError: result.isError })
  }
  for (const draft of repairEvents(plan, reruns)) session.append(draft.type, draft.data)
  for (const call of plan.calls) {
    if (call.action === 'rerun') continue
    report.paired.push({ callId: call.callId, name: call.name, code: call.action === 'not-started' ? 'TOOL_NOT_STARTED' : 'TOOL_OUTCOME_UNKNOWN' })
  }
  if (plan.turn !== undefined) report.closedTurn = plan.turn
  await session.flush()
  return report
}
