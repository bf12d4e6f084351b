/** What an agent is configured with, and the `Config` of the `ctx.agents` plugin that supplies defaults. */

import Schema from '@deepseek-ai/schemastery'
import type { ModelRoute } from '@rein/llm'

export interface AgentOptions {
  /** Names the agent in tool runs and lifecycle events. Default `main`. */
  name: string
  provider: string
  model: string
  /** Text that opens the system prompt, before the plugins' sections. */
  system?: string
  fallbacks: ModelRoute[]
  maxTokens?: number
  temperature?: number
  reasoningEffort?: string
  /** Requests per turn. */
  maxSteps: number
  /** Output tokens per turn, summed over its requests. */
  maxOutputTokens?: number
  /** Money per turn, from the models' pricing. */
  maxCost?: number
  /** Concurrency-safe calls that may run at once. */
  maxParallelToolCalls: number
  /**
   * A tool result longer than this many characters (or `spillAfterLines` lines) is spilled: the
   * full text goes to a file in the session's folder, the model reads a head and tail and the path.
   */
  spillAfterChars: number
  spillAfterLines: number
  /** Tools this agent may see and run, by name or glob (`fs_*`), `!pattern` to exclude; `[]` = none. Default `['*']`: every registered tool. */
  tools?: string[]
  /**
   * The memory scopes this agent may read (its prompt block, `memory_search`) and write; read by
   * @rein/memory, which otherwise decides from its own Config (a subagent gets none by default).
   */
  memory?: AgentMemoryScopes
  /** Working directory for tools. */
  cwd: string
  /** The folder tools may work in. Default: `cwd`. */
  workspaceRoot?: string
}

/** Scopes of @rein/memory: `user` (the person, every project) and `project` (this workspace). */
export interface AgentMemoryScopes {
  read?: ('user' | 'project')[]
  write?: ('user' | 'project')[]
}

// Absent stays absent (the memory row decides), never an empty list (which would mean no memory).
const MEMORY_SCOPE_LIST = Schema.union([Schema.array(Schema.union(['user', 'project'])), Schema.const(undefined)]) as Schema<('user' | 'project')[] | undefined>

export type AgentConfig = Omit<AgentOptions, 'cwd' | 'workspaceRoot' | 'provider' | 'model'> & { provider?: string; model?: string }

export const AgentConfig: Schema<Partial<AgentConfig>, AgentConfig> = Schema.object({
  name: Schema.string().default('main').description('Names the agent in tool runs and lifecycle events.'),
  provider: Schema.string().description('Provider route used when a caller names none.'),
  model: Schema.string().description('Model used when a caller names none.'),
  system: Schema.string().description('Opening of the system prompt.'),
  fallbacks: Schema.array(Schema.object({ provider: Schema.string().required(), model: Schema.string().required() })).default([]).description('Routes tried in order when a request fails before showing anything.'),
  maxTokens: Schema.natural().description('Output budget per request. Default: the model catalog, else the provider.'),
  temperature: Schema.number().min(0).max(2).description('Sampling temperature. Default: the provider.'),
  reasoningEffort: Schema.string().description('Reasoning effort. Default: the model catalog.'),
  maxSteps: Schema.natural().min(1).default(50).description('Requests per turn.'),
  maxOutputTokens: Schema.natural().description('Output tokens per turn. Default: unlimited.'),
  maxCost: Schema.number().min(0).description('Money per turn. Default: unlimited.'),
  maxParallelToolCalls: Schema.natural().min(1).default(8).description('Concurrency-safe calls run at once.'),
  spillAfterChars: Schema.natural().min(200).default(20_000).description('A longer tool result is saved to the session folder; the model reads its head, tail and path.'),
  spillAfterLines: Schema.natural().min(10).default(1_200).description('Same, counted in lines.'),
  tools: Schema.array(Schema.string()).default(['*']).description('Tools this agent may see and run, by name or glob; !pattern excludes; [] = none. Default: all.'),
  memory: Schema.union([Schema.object({
    read: MEMORY_SCOPE_LIST.description('Memory scopes the agent may read.'),
    write: MEMORY_SCOPE_LIST.description('Memory scopes the agent may write.'),
  }), Schema.const(undefined)]).description('The memory scopes this agent may read and write (@rein/memory). Default: the memory row decides.'),
}) as Schema<Partial<AgentConfig>, AgentConfig>
