/** The `Config` of the `ctx.subagents` plugin: how deep delegation may go, and the named agent profiles. */

import Schema from '@deepseek-ai/schemastery'
import { MAX_TIMER_MS } from '@rein/base'

/** A named kind of subagent the model may ask for with `agent: <name>`. */
export interface SubagentProfile {
  /** One line the model reads in the tool's description, to choose this profile. */
  description?: string
  /** The child's system prompt opening (instead of the agents row's). */
  system?: string
  /** Default: the parent's provider. */
  provider?: string
  /** Default: the parent's model (with the profile's provider, when it names one). */
  model?: string
  /** Tools the child may use, by name or glob, `!pattern` to exclude; narrows the parent's, never widens it. */
  tools?: string[]
  /** Memory scopes the child may read and write (@rein/memory); absent = none. */
  memory?: { read?: ('user' | 'project')[]; write?: ('user' | 'project')[] }
  /** Requests per child turn. Default: the agents row's `maxSteps`. */
  maxSteps?: number
  /** How long one child turn may run (ms). Default: the Config's `timeoutMs`. */
  timeoutMs?: number
}

/** The plugin's settings; every field has a default (see the README). */
export interface SubagentsConfig {
  /** Deepest run that may still delegate is `maxDepth - 1`: a run at this depth is not offered the tool. */
  maxDepth: number
  /** How long one child turn may run (ms) before it is cancelled and its call ends `SUBAGENT_TIMEOUT`. */
  timeoutMs: number
  /** Background children one run tree (a root session and all its subagents) may run at once; a start past it is `SUBAGENT_BACKGROUND_LIMIT`. */
  maxBackground: number
  profiles: Record<string, SubagentProfile>
}

/** The longest a Node timer waits. */

const SCOPES = Schema.union([Schema.array(Schema.union(['user', 'project'])), Schema.const(undefined)]) as Schema<('user' | 'project')[] | undefined>

// A pattern list the agent would refuse (`INVALID_TOOLS`) fails the load here, naming the profile's field.
const TOOL_PATTERN = Schema.string().pattern(/^!?[^!\s]/).description('a tool name or glob; !pattern excludes')

const Profile: Schema<SubagentProfile> = Schema.object({
  description: Schema.string().description('What this kind of subagent is for, as the model reads it.'),
  system: Schema.string().description('Opening of the child\'s system prompt.'),
  provider: Schema.string().description('Provider route. Default: the parent\'s.'),
  model: Schema.string().description('Model. Default: the parent\'s.'),
  // Left out, no list at all (a bare array would default to [], which allows none).
  tools: Schema.union([Schema.array(TOOL_PATTERN), Schema.const(undefined)]).description('Tools the child may use (narrows the parent\'s); [] = none. Default: the parent\'s.'),
  memory: Schema.object({ read: SCOPES, write: SCOPES }).description('Memory scopes the child may read and write. Default: none.'),
  maxSteps: Schema.natural().min(1).description('Requests per child turn. Default: the agents row\'s.'),
  timeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).description('How long one child turn may run (ms). Default: the row\'s timeoutMs.'),
}) as Schema<SubagentProfile>

/** The schema cordis validates the subagents row's `config` with. */
export const SubagentsConfig: Schema<Partial<SubagentsConfig>, SubagentsConfig> = Schema.object({
  maxDepth: Schema.natural().min(1).max(10).default(3)
    .description('How deep delegation goes: a run at this depth is not offered the subagent tool.'),
  timeoutMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(30 * 60_000)
    .description('How long one child turn may run (ms) before it is cancelled; its call ends SUBAGENT_TIMEOUT with what it had.'),
  // Each background child makes requests of its own, unwatched: a bound over the whole tree keeps one
  // answer (or children starting their own) from starting dozens.
  maxBackground: Schema.natural().min(1).max(64).default(4)
    .description('How many background subagents one run tree (the session the user started and all its subagents, together) may run at once; a start past it is refused (SUBAGENT_BACKGROUND_LIMIT).'),
  profiles: Schema.dict(Profile).default({})
    .description('Named subagent kinds: {<name>: {description, system, provider, model, tools, memory, maxSteps}}.'),
}) as Schema<Partial<SubagentsConfig>, SubagentsConfig>
