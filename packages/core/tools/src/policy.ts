/**
 * Combines pre-execute policies and guards. Order of registration never matters here:
 * any deny wins, then any ask, else allow; a policy or guard that throws counts as a deny.
 */

import { thrownMessage } from '@rein/base'
import type { PreExecuteDecision, PreExecutePolicy, ToolCall, ToolGuard } from './hooks.ts'
import { isThenable } from './thenable.ts'
import { STOPPED, untilStopped } from './until-stopped.ts'

const ALLOW: PreExecuteDecision = Object.freeze({ kind: 'allow' })

/** The combined decision, or `STOPPED` when `signal` aborts before every policy answered. */
export async function combineDecisions(policies: readonly PreExecutePolicy[], call: ToolCall, signal: AbortSignal): Promise<PreExecuteDecision | typeof STOPPED> {
  if (policies.length === 0) return ALLOW
  const decisions = await untilStopped(Promise.all(policies.map(async (policy): Promise<PreExecuteDecision | undefined> => {
    try {
      return normalize(await policy(call))
    } catch (error) {
      return { kind: 'deny', reason: `a pre-execute policy failed (${thrownMessage(error) ?? 'it threw something with no message'})` }
    }
  })), signal)
  if (decisions === STOPPED) return STOPPED
  const deny = decisions.find((decision) => decision?.kind === 'deny')
  if (deny) return deny
  return decisions.find((decision) => decision?.kind === 'ask') ?? ALLOW
}

function normalize(decision: PreExecuteDecision | undefined): PreExecuteDecision | undefined {
  if (decision === undefined || decision.kind === 'allow') return decision
  const reason = typeof decision.reason === 'string' && decision.reason ? decision.reason : 'no reason given'
  if (decision.kind === 'ask') return { kind: 'ask', reason }
  if (decision.kind === 'deny') return typeof decision.code === 'string' && decision.code ? { kind: 'deny', reason, code: decision.code } : { kind: 'deny', reason }
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
      return `a guard failed (${thrownMessage(error) ?? 'it threw something with no message'})`
    }
    if (reason === STOPPED) return STOPPED
    if (reason !== undefined) return typeof reason === 'string' && reason ? reason : 'denied by a guard'
  }
  return undefined
}
