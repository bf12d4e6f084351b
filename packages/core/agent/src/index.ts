/**
 * @rein/agent: the `ctx.agents` service — the turn and step loop over `ctx.llm`, `ctx.tools` and
 * `ctx.sessions`, with a bounded tool pool, cancellation, budgets, prompt sections, injections,
 * lifecycle events and resume.
 */

import { AgentService } from './service.ts'

export default AgentService
export { AgentService, type CreateAgentOptions, type ParentRef, type ResumeAgentOptions, type ResumeDefaults, type ResumeReport } from './service.ts'
export { Agent, type Injection } from './agent.ts'
export { AgentConfig, type AgentConfigInput, type AgentOptions, type AgentMemoryScopes, type CompactionOptions } from './options.ts'
/** Counts the tokens of a text, for the context meter (`ctx.agents.tokenizer`). */
export type { Tokenizer } from './compaction/meter.ts'
export type { AgentEvent, TreeUsage, TurnResult } from './events.ts'
export { buildSystem, type PromptSection, type PromptSectionContext } from './sections.ts'
export type { ParentRun } from './identity.ts'
/** An allow-list (`['fs_*', '!fs_write']`) as a predicate on tool names; undefined = every tool. `INVALID_TOOLS` for a malformed list. */
export { visibleTools } from './visibility.ts'
/** The tool names a log's last request offered: what a resumed child keeps when given no allow-list. */
export { recordedTools } from './request-header.ts'
export type {
  LifecycleEvents, LifecycleBase, TurnStartEvent, TurnEndEvent, StepStartEvent, StepEndEvent,
  LlmAttemptStartEvent, LlmAttemptEndEvent, ToolStartEvent, ToolEndEvent, CompactionStartEvent, CompactionEndEvent,
  RepairStartEvent, RepairEndEvent,
} from './lifecycle.ts'
