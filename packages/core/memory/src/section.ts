/**
 * The `memory` prompt section for `ctx.agents` (@rein/agent): pinned, so it is rendered once at a
 * session's first request, recorded in its log, and replayed from there — never re-rendered.
 */

import type { Logger } from '@deepseek-ai/cordis'
import { ReinError, errorChain, isReinError } from '@rein/base'
import type { RunIdentity } from '@rein/tools'
import { accessFor } from './access.ts'
import type { MemoryConfig } from './config.ts'
import { BLOCK_TYPE_ORDER, renderMemoryBlock } from './prompt-block.ts'
import type { MemoryEntry, MemoryScope, RecallQuery } from './types.ts'

/** What @rein/agent's `render` gets (its `PromptSectionContext`), as far as the block reads it. */
interface MemorySectionContext {
  workspaceRoot: string
  sessionId: string
  identity: RunIdentity
}

/** The shape of @rein/agent's `PromptSection` this package registers. */
export interface MemorySection {
  id: 'memory'
  order: number
  pinned: true
  render(context: MemorySectionContext): Promise<string | undefined>
}

/** The part of `ctx.agents` memory needs: registering the section, and a live agent's tools and options. */
export interface AgentsLike {
  section(section: MemorySection): () => unknown
  find?(sessionId: string): LiveAgentLike | undefined
}

/** A live agent (@rein/agent's `Agent`), as far as memory reads it. */
interface LiveAgentLike {
  canUse(name: string): boolean
  /** Its `AgentOptions`: `memory` names the scopes it may read and write. */
  options?: { memory?: { read?: readonly MemoryScope[]; write?: readonly MemoryScope[] } }
}

/** What the section needs from the service. */
export interface SectionSource {
  hasStore(): boolean
  recall(query: RecallQuery): Promise<readonly MemoryEntry[]>
  projectIdFor(workspaceRoot: string): Promise<string>
}

/**
 * The section. A recall that fails leaves the block out of that session, never the run: it is told
 * to `recallFailed` (the service tells people once per cause: `memory/unavailable`, or a warning
 * when that event went out already for another cause) and logged at debug level only, so people do
 * not read it twice.
 */
export function memorySection(memory: SectionSource, config: MemoryConfig, agents: () => AgentsLike | undefined, logger: Logger, recallFailed: (error: ReinError) => void): MemorySection {
  return {
    id: 'memory',
    order: config.prompt.order,
    pinned: true,
    render: async (context) => {
      const { maxEntries, maxTokens } = config.prompt
      const access = accessFor(config, context.identity, agents)
      if (maxEntries === 0 || access.read.length === 0 || !memory.hasStore()) return undefined
      let candidates: MemoryEntry[]
      try {
        const projectId = await memory.projectIdFor(context.workspaceRoot)
        // One recall per type: the newest of each, so a type the store orders last is not crowded out.
        const lists = await Promise.all(BLOCK_TYPE_ORDER.map((type) => memory.recall({ scopes: access.read, projectId, types: [type], limit: maxEntries })))
        candidates = lists.flat()
      } catch (error) {
        logger.debug('the memory block was left out of session %s: recall failed: %s', context.sessionId, errorChain(error))
        recallFailed(isReinError(error) ? error : new ReinError('MEMORY_RECALL_FAILED', `memory recall failed: ${errorChain(error)}`, { cause: error }))
        return undefined
      }
      const agent = agents()?.find?.(context.sessionId)
      const canUse = (name: string) => agent?.canUse(name) ?? true
      const hints = { search: canUse('memory_search'), correct: access.write.length > 0 && canUse('memory_write') && canUse('memory_forget') }
      return renderMemoryBlock(candidates, { maxEntries, maxTokens }, hints)
    },
  }
}
