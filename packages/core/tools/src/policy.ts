/**
 * Combines pre-execute policies and guards. Order of registration never matters here:
 * any deny wins, then any ask, else allow; a policy or guard that throws counts as a deny. Among
 * denials, one naming a code (what the tool would refuse anyway) wins over a plain one (which may
 * tell the person how to allow a call that could never succeed).
 */

import type { PreExecuteDecision, PreExecutePolicy, ToolCall, ToolGuard } from './hooks.ts'
import { isThenable } from './thenable.ts'
import { thrownText } from './thrown-value.ts'
import { STOPPED, untilStopped } from './until-stopped.ts'

const ALLOW: PreExecuteDecision = Object.freeze({ kind: 'allow' })

/** The combined decision, or `STOPPED` when `signal` aborts before every policy answered. */
export async function combineDecisions(policies: readonly PreExecutePolicy[], call: ToolCall, signal: AbortSignal): Promise<PreExecuteDecision | typeof STOPPED> {
  if (policies.length === 0) return ALLOW
  const decisions = await untilStopped(Promise.all(policies.map(async (policy): Promise<PreExecuteDecision | undefined> => {
    try {
      return normalize(await policy(call))
    } catch (error) {
      return { kind: 'deny', reason: `a pre-execute policy failed (${thrownText(error) ?? 'it threw something with no message'})` }
    }
  })), signal)
  if (decisions === STOPPED) return STOPPED
  const deny = decisions.find((decision) => decision?.kind === 'deny' && decision.code !== undefined) ?? decisions.find((decision) => decision?.kind === 'deny')
  if (deny) return deny
  return decisions.find((decision) => decision?.kind === 'ask') ?? ALLOW
}

/**
 * Codes that say a call did something other than being refused before it ran: it ran (and failed,
 * timed out, or a hook blocked its result), was cancelled, names no tool, or a crash left it
 * unstarted or unknown (the agent's and the session's codes). Session logs, the compaction ledger
 * (which calls touched files), telemetry spans and `rein resume` read them as what happened, so a
 * policy's deny naming one is a plain `DENIED`.
 */
const NOT_A_REFUSAL: ReadonlySet<string> = new Set([
  'UNKNOWN_TOOL', 'ABORTED_BEFORE_DISPATCH', 'ABORTED', 'TOOL_TIMEOUT', 'TOOL_FAILED', 'INVALID_TOOL_OUTPUT', 'BLOCKED',
  'TOOL_NOT_STARTED', 'TOOL_OUTCOME_UNKNOWN', 'BUDGET_EXCEEDED',
])

function normalize(decision: PreExecuteDecision | undefined): PreExecuteDecision | undefined {
  if (decision === undefined) return decision
  // Not an object (null from a JavaScript policy): an unknown decision, said as one rather than as the TypeError reading `kind` gives.
  if (typeof decision !== 'object' || decision === null) return { kind: 'deny', reason: 'a pre-execute policy returned an unknown decision' }
  if (decision.kind === 'allow') return decision
  const reason = typeof decision.reason === 'string' && decision.reason ? decision.reason : 'no reason given'
  if (decision.kind === 'ask') return { kind: 'ask', reason }
  if (decision.kind === 'deny') {
    const code = decision.code
    return typeof code === 'string' && code && !NOT_A_REFUSAL.has(code) ? { kind: 'deny', reason, code } : { kind: 'deny', reason }
  }
  return { kind: 'deny', reason: 'a pre-execute policy returned an unknown decision' }
}

/**
 * The first denial reason, in registration order, or `undefined` when every guard passes; `STOPPED`
 * when `signal` aborts while a guard is still deciding.
 */
export async function runGuards(guards: readonly ToolGuard[], call: ToolCall, signal: AbortSignal): Promise<string | undefined | typeof STOPPED> {
  for (const guard of guards) {
    let reason: string | undefined | typeof STOPPED
    try {
      const said = guard(call)
      reason = isThenable(said) ? await untilStopped(said, signal) : said
    } catch (error) {
      return `a guard failed (${thrownText(error) ?? 'it threw something with no message'})`
    }
    if (reason === STOPPED) return STOPPED
    if (reason !== undefined) return typeof reason === 'string' && reason ? reason : 'denied by a guard'
  }
  return undefined
}
