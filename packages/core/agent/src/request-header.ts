/**
 * When to write `request/header`: when the route, the system text or the tool schemas changed since
 * the last one. Text and schemas are written in full only when they changed; hashes always.
 * Unchanged → nothing written, and the request keeps the previous one's prefix.
 */

import { createHash } from 'node:crypto'
import type { ToolSpec } from '@rein/llm'
import { eventData, type CoreEventData, type SessionEvent } from '@rein/session'

export type RequestHeader = CoreEventData['request/header']

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16)
}

// Every step asks for the same system text and tool list while nothing changes: hash them once.
let lastSystem: { text: string; hash: string } | undefined
const toolHashes = new WeakMap<readonly ToolSpec[], string>()

function systemHashOf(system: string): string {
  if (lastSystem?.text !== system) lastSystem = { text: system, hash: hashOf(system) }
  return lastSystem.hash
}

function toolsHashOf(tools: readonly ToolSpec[]): string {
  let hash = toolHashes.get(tools)
  if (hash === undefined) toolHashes.set(tools, hash = hashOf(JSON.stringify(tools)))
  return hash
}

/** The last header in a log. */
export function findLastHeader(events: readonly SessionEvent[]): RequestHeader | undefined {
  const last = events.findLast((event) => event.type === 'request/header')
  return last && eventData(last, 'request/header')
}

/**
 * The tool names a log's last request offered (the set its agent was allowed then); undefined
 * before any request recorded its tools. What a child session is resumed with when the caller gives
 * no allow-list (none before its first request): a resume never widens what a subagent may do.
 */
export function recordedTools(events: readonly SessionEvent[]): string[] | undefined {
  const header = events.findLast((event) => event.type === 'request/header' && eventData(event, 'request/header').tools !== undefined)
  if (!header) return undefined
  const { tools } = eventData(header, 'request/header')
  return Array.isArray(tools) ? tools.flatMap((tool) => (typeof tool === 'object' && tool !== null && !Array.isArray(tool) && typeof tool.name === 'string' ? [tool.name] : [])) : []
}

/** Every pinned section text the log's headers recorded, by id. */
export function recordedPins(events: readonly SessionEvent[]): Map<string, string> {
  const pins = new Map<string, string>()
  for (const event of events) {
    if (event.type !== 'request/header') continue
    for (const [id, text] of Object.entries(eventData(event, 'request/header').pinned ?? {})) pins.set(id, text)
  }
  return pins
}

/** The header a request needs written, or undefined when `previous` still describes it and no section was pinned anew. */
export function nextHeader(previous: RequestHeader | undefined, route: { provider: string; model: string }, system: string, tools: readonly ToolSpec[], pinned: Record<string, string> = {}): RequestHeader | undefined {
  const systemHash = systemHashOf(system)
  const toolsHash = toolsHashOf(tools)
  const pinning = Object.keys(pinned).length > 0
  if (!pinning && previous && previous.provider === route.provider && previous.model === route.model && previous.systemHash === systemHash && previous.toolsHash === toolsHash) return undefined
  return {
    ...(pinning ? { pinned } : {}),
    provider: route.provider,
    model: route.model,
    ...(previous?.systemHash !== systemHash ? { system } : {}),
    ...(previous?.toolsHash !== toolsHash ? { tools: tools as never } : {}),
    systemHash,
    toolsHash,
  }
}
