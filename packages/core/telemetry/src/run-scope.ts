/**
 * A run's scope: derived from the run identity the agent gives every lifecycle event and tool call,
 * and carried through a tool body (and whatever it awaits) by AsyncLocalStorage.
 */

import { AsyncLocalStorage } from 'node:async_hooks'
import type { ExecuteWrapper, RunIdentity } from '@rein/tools'
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
 * `active`. Inactive, the wrapper only calls on: AsyncLocalStorage turns on promise hooks for the
 * whole process once used (Node 20), which costs every promise, so it is used only while wanted.
 */
export class ScopeCarrier {
  private readonly storage = new AsyncLocalStorage<RunScope>()
  private active = false

  /** The scope of the tool call whose body (or something it awaited) is running now. */
  current(): RunScope | undefined {
    return this.storage.getStore()
  }

  /** Starts or stops carrying scopes; stopping lets the process drop its promise hooks (when no other storage holds them). */
  carry(active: boolean): void {
    if (this.active === active) return
    this.active = active
    if (!active) this.storage.disable()
  }

  /** `tools/execute` wrapper: runs the body in the calling run's scope; a call with no identity runs as it is. */
  readonly wrapper: ExecuteWrapper = (call, next) => {
    const { identity } = call
    return !this.active || identity === undefined ? next() : this.storage.run(scopeOf(identity), next)
  }
}
