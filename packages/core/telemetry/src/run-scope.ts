/**
 * A run's scope: derived from the run identity the agent gives every lifecycle event and tool call,
 * and carried through a tool body (and whatever it awaits) by AsyncLocalStorage.
 */

import { AsyncLocalStorage } from 'node:async_hooks'
import type { DispatchOutcome, ExecuteWrapper, RunIdentity } from '@rein/tools'
import type { RunScope } from './types.ts'

// A run's identity is one frozen object shared by all its events: its scope is built once.
const scopes = new WeakMap<RunIdentity, RunScope>()

/** The scope of the run `identity` names; the same object for the same identity. */
export function scopeOf(identity: RunIdentity): RunScope {
  let scope = scopes.get(identity)
  if (scope === undefined) {
    scope = Object.freeze({
      runId: identity.runId,
      ...(identity.parentRunId !== undefined ? { parentRunId: identity.parentRunId } : {}),
      ...(identity.parentCallId !== undefined ? { parentCallId: identity.parentCallId } : {}),
      ...(identity.parentRunPending === true ? { parentRunPending: true } : {}),
      turnId: identity.turnId,
      sessionId: identity.sessionId,
      conversationId: identity.conversationId,
      agentName: identity.agent,
      depth: identity.depth,
    })
    scopes.set(identity, scope)
  }
  return scope
}

/**
 * The current run's scope inside tool bodies, set by an execute wrapper around each call while
 * `active`. AsyncLocalStorage turns on promise hooks for the whole process while it is enabled
 * (Node 20), which costs every promise anywhere: it is enabled only while a tool call runs, and
 * disabled when the last one in flight ends.
 */
export class ScopeCarrier {
  private readonly storage = new AsyncLocalStorage<RunScope>()
  private active = false
  /** Calls running in a scope: the storage is disabled when this drops back to 0. */
  private inFlight = 0

  /** The scope of the tool call whose body (or something it awaited) is running now. */
  current(): RunScope | undefined {
    return this.storage.getStore()
  }

  /** Starts or stops carrying scopes into the calls that start from now on. */
  carry(active: boolean): void {
    this.active = active
  }

  /** `tools/execute` wrapper: runs the body in the calling run's scope; a call with no identity runs as it is. */
  readonly wrapper: ExecuteWrapper = (call, next) => {
    const { identity } = call
    if (!this.active || identity === undefined) return next()
    this.inFlight++
    const settled = () => {
      // Disabling exits every context of this storage: only once no call needs its scope.
      if (--this.inFlight === 0) this.storage.disable()
    }
    let running: Promise<DispatchOutcome>
    try {
      running = this.storage.run(scopeOf(identity), next)
    } catch (error) {
      settled()
      throw error
    }
    return running.finally(settled)
  }
}
