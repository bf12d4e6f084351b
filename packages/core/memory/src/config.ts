/** The plugin's Config: limits, the project's name, and which scopes agents may read and write. */

import Schema from '@deepseek-ai/schemastery'
import { kindOf, ReinError } from '@rein/base'
import type { MemoryScope } from './types.ts'

/** Which scopes a run may read (recall, search, the prompt block) and write (write, update, forget). */
export interface MemoryScopes {
  read: MemoryScope[]
  write: MemoryScope[]
}

/** The prompt block's limits. */
export interface MemoryPromptConfig {
  /** Most entries in the block (at most 20); 0 leaves the block out. */
  maxEntries: number
  /** Most tokens the block may take (ASCII characters / 4, one per other character); at least 150. */
  maxTokens: number
  /** The section's place among the system prompt's sections. */
  order: number
}

/** The Config of `@rein/memory` (see the README's Config table). */
export interface MemoryConfig {
  /** Names the project for every workspace; default: the workspace root's real path. */
  projectId?: string
  /** Longest content an entry may have, in characters (code points). */
  maxContentChars: number
  /** Most entries one recall or search returns. */
  maxRecall: number
  /** Entries `memory_search` returns when the model names no `limit`. */
  searchLimit: number
  /** The scopes every agent may read and write, unless `agents` names it. */
  scopes: MemoryScopes
  /** Per agent name (`RunIdentity.agent`): its own scopes; a missing field falls back to `scopes`. */
  agents: Record<string, Partial<MemoryScopes>>
  /** Whether subagents (runs at depth > 0) use memory at all. */
  subagents: boolean
  /** Whether a tool call that changes user-scope memory asks a person even where its `write` effect is allowed (`--allow write`). */
  askUserScope: boolean
  prompt: MemoryPromptConfig
}

/** What a cordis.yml row may give: every key optional, nested ones too. */
type MemoryConfigInput = Partial<Omit<MemoryConfig, 'scopes' | 'prompt'>> & { scopes?: Partial<MemoryScopes>; prompt?: Partial<MemoryPromptConfig> }

const SCOPE = Schema.union(['user', 'project']) as Schema<MemoryScope>
const SCOPE_LIST = Schema.array(SCOPE)
// A per-agent field that is not given must stay absent (it falls back to `scopes`), not become [].
const OPTIONAL_SCOPE_LIST = Schema.union([SCOPE_LIST, Schema.const(undefined)]) as Schema<MemoryScope[] | undefined>

/** The Config schema of `@rein/memory`. */
export const MemoryConfig: Schema<MemoryConfigInput, MemoryConfig> = Schema.object({
  projectId: Schema.transform(Schema.any(), checkProjectId).description('Names the project for every workspace. Default: the workspace root\'s real path.'),
  maxContentChars: Schema.natural().min(1).max(100_000).default(2_000)
    .description('Longest content an entry may have, in characters; a longer write is refused.'),
  maxRecall: Schema.natural().min(1).max(1_000).default(50)
    .description('Most entries one recall or search returns.'),
  searchLimit: Schema.natural().min(1).max(1_000).default(10)
    .description('Entries memory_search returns when the model names no limit.'),
  scopes: Schema.object({
    read: SCOPE_LIST.default(['user', 'project']).description('Scopes agents may read (prompt block, memory_search).'),
    write: SCOPE_LIST.default(['user', 'project']).description('Scopes agents may write (memory_write, memory_update, memory_forget).'),
  }).description('The scopes every agent may read and write, unless agents names it.'),
  agents: Schema.dict(Schema.object({ read: OPTIONAL_SCOPE_LIST, write: OPTIONAL_SCOPE_LIST })).default({})
    .description('Per agent name: its own read and write scopes; a field left out falls back to scopes.'),
  subagents: Schema.boolean().default(false)
    .description('Whether subagents (depth > 0) use memory: the prompt block and the memory tools.'),
  askUserScope: Schema.boolean().default(true)
    .description('Tool calls that change user-scope memory (read in every project) ask a person, even under --allow write.'),
  prompt: Schema.object({
    maxEntries: Schema.natural().max(20).default(20).description('Most entries in the prompt block (at most 20); 0 leaves it out.'),
    // The heading, the intro and its tool hints and the "older entries" line take about 105
    // tokens: below 150 a block could never hold an entry.
    maxTokens: Schema.natural().min(150).default(1_200).description('Most tokens the prompt block may take (characters / 4); at least 150, room for one short entry.'),
    order: Schema.number().default(900).description('The block\'s place among the system prompt\'s sections.'),
  }).description('The block of remembered entries put into the system prompt at session start.'),
}) as Schema<MemoryConfigInput, MemoryConfig>

/** Config `projectId` when it names a project; an empty one would be ignored without a word (the path would name it). */
function checkProjectId(value: unknown): string | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw new ReinError('CONFIG_INVALID', `projectId must be text, not ${kindOf(value)}`)
  if (value.trim() === '') throw new ReinError('CONFIG_INVALID', 'projectId is empty: name the project, or leave projectId out for the workspace root\'s real path')
  return value
}
