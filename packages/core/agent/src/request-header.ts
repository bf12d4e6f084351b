/**
 * Writes `request/header` when what a request is built from changes: the full system text and tool
 * schemas when they differ from the last header, their hashes always. Unchanged → nothing written,
 * and the request keeps the previous one's prefix.
 */

import { createHash } from 'node:crypto'
import type { ToolSpec } from '@rein/llm'
import type { CoreEventData, Session } from '@rein/session'

type Header = CoreEventData['request/header']

export function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16)
}

/** The last header in the log, and the last full system text and tools it or an earlier one carried. */
function lastHeader(session: Session): { header?: Header; system?: string; tools?: readonly ToolSpec[] } {
  let header: Header | undefined
  let system: string | undefined
  let tools: readonly ToolSpec[] | undefined
  for (let i = session.events.length - 1; i >= 0; i--) {
    const event = session.events[i]!
    if (event.type !== 'request/header') continue
    const data = event.data as unknown as Header
    header ??= data
    system ??= data.system
    tools ??= data.tools as unknown as readonly ToolSpec[] | undefined
    if (system !== undefined && tools !== undefined) break
  }
  return { ...(header ? { header } : {}), ...(system !== undefined ? { system } : {}), ...(tools ? { tools } : {}) }
}

/** Appends a header if provider, model, system or tools changed since the last one. */
export function recordHeader(session: Session, route: { provider: string; model: string }, system: string, tools: readonly ToolSpec[]): void {
  const systemHash = hashOf(system)
  const toolsHash = hashOf(JSON.stringify(tools))
  const { header } = lastHeader(session)
  if (header && header.provider === route.provider && header.model === route.model && header.systemHash === systemHash && header.toolsHash === toolsHash) return
  session.append('request/header', {
    provider: route.provider,
    model: route.model,
    ...(header?.systemHash !== systemHash ? { system } : {}),
    ...(header?.toolsHash !== toolsHash ? { tools: tools as never } : {}),
    systemHash,
    toolsHash,
  })
}
