/**
 * A child session resumed outside a subagent call (`rein resume <child id>`, an embedder's
 * `ctx.agents.resume`): it goes on as the call that made it had it made — the profile the call
 * named (its system prompt, steps, memory) and the tools the call and profile allowed, never more
 * than its requests were offered — not as a new agent of the agents row.
 */

import { recordedTools, type AgentOptions } from '@rein/agent'
import { eventData, type SessionEvent, type SessionHeader, type SessionService } from '@rein/session'
import type { ToolRegistry } from '@rein/tools'
import type { SubagentsConfig } from './config.ts'
import { callOptions } from './resume.ts'

/**
 * The options a stored session is resumed with (`ctx.agents.resumeDefaults`): `{}` for a top-level
 * session, or a child whose making call is not in its parent's log, or names a profile gone from
 * Config (@rein/agent then keeps the tools its requests were offered).
 */
export async function resumeOptionsOf(sessions: SessionService | undefined, config: SubagentsConfig, tools: ToolRegistry, { header, events }: { header: SessionHeader; events: readonly SessionEvent[] }): Promise<Partial<AgentOptions>> {
  const { parentSessionId, parentCallId } = header
  if (!sessions) return {}
  if (parentSessionId === undefined || parentCallId === undefined) return {}
  // A parent log gone or unreadable says nothing of the call: @rein/agent still keeps the recorded tools.
  const parent = await sessions.load(parentSessionId).catch(() => undefined)
  const args = parent && callArguments(parent.events, parentCallId)
  if (args === undefined) return {}
  try {
    // A child that made no request yet is known to be allowed nothing more.
    return callOptions(config, tools, args, recordedTools(events) ?? [])
  } catch {
    return {}
  }
}

/** The profile and tools the parent's call `callId` asked for; undefined when the log has no such call. */
function callArguments(events: readonly SessionEvent[], callId: string): { agent?: string; tools?: string[] } | undefined {
  const call = events.find((event) => event.type === 'tool/call' && eventData(event, 'tool/call').callId === callId)
  if (!call) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(eventData(call, 'tool/call').arguments)
  } catch {
    return {}
  }
  if (typeof parsed !== 'object' || parsed === null) return {}
  const { agent, tools } = parsed as { agent?: unknown; tools?: unknown }
  return {
    ...(typeof agent === 'string' ? { agent } : {}),
    ...(Array.isArray(tools) && tools.every((name): name is string => typeof name === 'string') ? { tools } : {}),
  }
}
