/** What an agent is configured with, and the `Config` of the `ctx.agents` plugin that supplies defaults. */

import Schema from '@deepseek-ai/schemastery'
import { messageOf, ReinError } from '@rein/base'
import type { ModelRoute } from '@rein/llm'

/** Everything that shapes an agent: its name, model route, prompt, budgets, compaction and workspace. */
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
  /** When and how the context is compacted before it fills the model's window. */
  compaction: CompactionOptions
  /** Working directory for tools. */
  cwd: string
  /** The folder tools may work in. Default: `cwd`. */
  workspaceRoot?: string
}

/** Context compaction (see the README): a meter before each request, pruning first, a summary if that is not enough. */
export interface CompactionOptions {
  /** `auto`: before a request that would pass the threshold; `manual`: only when asked (`agent.compact`); `off`. */
  mode: 'auto' | 'manual' | 'off'
  /** Fraction of the model's context window at which `auto` compacts. */
  threshold: number
  /** Tokens always left free for the answer and the summary request: compaction starts by `window - reserveTokens` at the latest. */
  reserveTokens: number
  /** What a compaction brings the request down to, as a fraction of the window; a summary is written only when pruning does not reach it. */
  target: number
  /** The most recent tool output kept whole, in tokens (at most a quarter of the window). */
  keepToolTokens: number
  /** The last user turns, kept whole. */
  keepTurns: number
  /** Output budget of the summary request. */
  summaryMaxTokens: number
  /** The route that writes summaries (a cheaper model, say). Default: the agent's. */
  summaryRoute?: ModelRoute
}

/** What is wrong with compaction settings the schema takes one by one but not together, if anything. */
export function compactionProblem({ mode, target, threshold }: CompactionFields): string | undefined {
  if (mode !== 'auto' || typeof target !== 'number' || typeof threshold !== 'number' || target < threshold) return undefined
  return `compaction.target (${target}) must be below compaction.threshold (${threshold}): a compaction starts at the threshold and brings the request down to the target`
}

/** The compaction fields checked together, as the schema gives them (defaults filled) or a caller does. */
interface CompactionFields {
  mode?: string | null
  target?: number | null
  threshold?: number | null
}

/** `compaction` if its fields fit together; else `CONFIG_INVALID` saying why. */
function checkedCompaction<T extends CompactionFields>(compaction: T): T {
  const problem = compactionProblem(compaction)
  if (problem) throw new ReinError('CONFIG_INVALID', problem)
  return compaction
}

/**
 * What is wrong with a caller's options (`create`, `resume`), checked field by field with the row's
 * schema, if anything: an option may not do what the row may not (a `maxSteps` of NaN lifted the limit).
 */
export function optionsProblem(options: object): string | undefined {
  const fields = AgentConfig.dict ?? {}
  for (const [key, value] of Object.entries(options)) {
    const field = fields[key]
    // `tools` has its own check, naming what a tool list is (INVALID_TOOLS).
    if (field === undefined || value === undefined || key === 'tools') continue
    // The schema lets NaN through (every comparison with it is false) and takes null for absent.
    const missing = heldNonValue(value)
    if (missing !== undefined) return `option ${key}: expected a value but got ${missing}`
    try {
      field(value)
    } catch (error) {
      return `option ${key}: ${messageOf(error)}`
    }
  }
  return undefined
}

/** `NaN` or `null` where `value` holds one, at any depth (what JSON makes of NaN is null). */
function heldNonValue(value: unknown): 'NaN' | 'null' | undefined {
  if (value === null) return 'null'
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : undefined
  if (typeof value !== 'object') return undefined
  for (const inner of Object.values(value)) {
    const found = heldNonValue(inner)
    if (found !== undefined) return found
  }
  return undefined
}

/** Scopes of @rein/memory: `user` (the person, every project) and `project` (this workspace). */
export interface AgentMemoryScopes {
  read?: ('user' | 'project')[]
  write?: ('user' | 'project')[]
}

// Absent stays absent (the memory row decides), never an empty list (which would mean no memory).
const MEMORY_SCOPE_LIST = Schema.union([Schema.array(Schema.union(['user', 'project'])), Schema.const(undefined)]) as Schema<('user' | 'project')[] | undefined>

/** The Config of `@rein/agent`: the agent options a `cordis.yml` row may set (see the README). */
export type AgentConfig = Omit<AgentOptions, 'cwd' | 'workspaceRoot' | 'provider' | 'model'> & { provider?: string; model?: string }

/** What a row or a caller may give for `AgentConfig`: every field optional, each of `compaction`'s too. */
export type AgentConfigInput = Partial<Omit<AgentConfig, 'compaction'>> & { compaction?: Partial<CompactionOptions> }

export const AgentConfig: Schema<AgentConfigInput, AgentConfig> = Schema.object({
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
  // Checked as the config loads, with the fields together: a target above the threshold fails the row, not the first agent.
  compaction: Schema.transform(Schema.object({
    mode: Schema.union(['auto', 'manual', 'off']).default('auto').description('auto: compact before a request would pass the threshold; manual: only when asked; off.'),
    threshold: Schema.number().min(0.1).max(0.95).default(0.8).description('Fraction of the context window at which auto compacts.'),
    reserveTokens: Schema.natural().default(8192).description('Tokens kept free for the answer and the summary request.'),
    target: Schema.number().min(0.05).max(0.9).default(0.5).description('Fraction of the window a compaction brings the request down to.'),
    keepToolTokens: Schema.natural().default(40_000).description('Most recent tool output kept whole, in tokens (at most a quarter of the window).'),
    keepTurns: Schema.natural().min(1).default(2).description('Last user turns kept whole.'),
    summaryMaxTokens: Schema.natural().min(256).default(2048).description('Output budget of the summary request.'),
    summaryRoute: Schema.union([Schema.object({ provider: Schema.string().required(), model: Schema.string().required() }), Schema.const(undefined)]).description('Route that writes summaries. Default: the agent\'s.'),
  }), checkedCompaction).default({} as never).description('Context compaction: when and how the conversation is shortened before it fills the window.'),
  memory: Schema.union([Schema.object({
    read: MEMORY_SCOPE_LIST.description('Memory scopes the agent may read.'),
    write: MEMORY_SCOPE_LIST.description('Memory scopes the agent may write.'),
  }), Schema.const(undefined)]).description('The memory scopes this agent may read and write (@rein/memory). Default: the memory row decides.'),
}) as Schema<AgentConfigInput, AgentConfig>
