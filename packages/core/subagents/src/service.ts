/**
 * The `ctx.subagents` service: registers the `subagent` tool while it is loaded, runs foreground
 * delegations and background ones (as `ctx.jobs` jobs), and interrupts the children still running
 * when it is disposed.
 */

import { Context, Service } from '@deepseek-ai/cordis'
import type { Agent, AgentService, ResumeReport } from '@rein/agent'
import type { JobService } from '@rein/jobs'
import type { LlmRuntime } from '@rein/llm'
import type { SessionService } from '@rein/session'
import type { ToolRegistry } from '@rein/tools'
import { SubagentsConfig, type SubagentProfile } from './config.ts'
import { startInBackground } from './background.ts'
import { closeLostChild } from './lost.ts'
import { profileProblems } from './profile.ts'
import { resumeOptionsOf } from './resume-options.ts'
import { runSubagent, type RunDeps } from './run.ts'
import { createSubagentTool } from './tool.ts'
import type { SubagentRequest, SubagentResult } from './types.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    subagents: SubagentService
  }
  interface Events {
    /** @rein/compose's check once every row has started (declared there too). */
    'compose/check'(problems: string[]): void | Promise<void>
  }
}

/** `ctx.subagents`: one per composition, after @rein/tools and @rein/agent. */
export class SubagentService extends Service {
  static readonly Config = SubagentsConfig
  static readonly inject = ['agents', 'tools']

  // Methods run on cordis's tracing proxy: the state is one plain object, read once per call.
  private _deps: RunDeps
  /** The logs of lost background children being closed. */
  private readonly _closing = new Set<Promise<void>>()

  constructor(ctx: Context, config: SubagentsConfig) {
    super(ctx, 'subagents')
    const running = new Set<Agent>()
    const deps: RunDeps = {
      ctx,
      config,
      agents: () => ctx.get('agents') as AgentService,
      tools: () => ctx.get('tools') as ToolRegistry,
      running,
      background: new Set(),
      jobs: () => ctx.get('jobs') as JobService | undefined,
      holders: new Map(),
      trees: new Map(),
    }
    this._deps = deps
    ctx.tools.register(createSubagentTool({
      config,
      tools: deps.tools,
      sessions: () => ctx.get('sessions') as SessionService | undefined,
      agents: deps.agents,
      running,
      run: (request) => runSubagent(deps, request),
      background: (request) => startInBackground(deps, request),
    }))
    // Profiles name tools and models other rows provide: checked once every row has started, so a
    // wrong name fails the load naming the profile rather than the model's first call.
    ctx.on('compose/check', async (problems) => {
      for (const problem of await profileProblems(config, deps.tools(), ctx.get('llm') as LlmRuntime | undefined)) problems.push(`@rein/subagents: ${problem}`)
    })
    // A child session resumed outside a call (`rein resume <child id>`, an embedder's) goes on as its
    // call's profile made it, never with a tool its requests were not offered.
    ctx.agents.resumeDefaults((session) => resumeOptionsOf(ctx.get('sessions') as SessionService | undefined, config, deps.tools(), session))
    // A background child whose process died: its log records `interrupted` once jobs reaps its job.
    const closing = this._closing
    ctx.on('jobs/lost', (lost) => {
      const sessions = ctx.get('sessions') as SessionService | undefined
      if (lost.kind !== 'subagent' || lost.ref === undefined || !sessions) return
      const done: Promise<void> = closeLostChild(deps.agents(), sessions, deps.jobs(), lost.ref)
        .then(() => {}, (error: unknown) => ctx.logger('subagents').warn('the log of subagent session %s (job %s, lost) was not closed: %s', lost.ref, lost.jobId, error))
        .finally(() => closing.delete(done))
      closing.add(done)
    })
    // Registered after the tool, so it runs first: children end (`interrupted`, recorded) before the tool goes.
    // Background children's jobs end (failed: interrupted) and the children close before it resolves.
    ctx.effect(() => async () => {
      await Promise.all([...running].map((child) => child.interrupt()))
      await Promise.all([...deps.background, ...closing])
    }, 'subagents: interrupt running children')
  }

  /**
   * Runs one foreground delegation: a child agent on its own session (linked to `call`'s run), sent
   * `prompt`, cancelled when `call.signal` aborts, closed afterwards. A child that does not
   * complete rejects with its partial answer and session id (`SUBAGENT_CANCELLED`, …).
   */
  run(request: SubagentRequest): Promise<SubagentResult> {
    return runSubagent(this._deps, request)
  }

  /**
   * Closes a log a crash left mid-turn without continuing anything, as a lost background child's
   * is: each open call settled by its tool or paired as unknown, none run again; the foreground
   * children it waited on closed the same way, and what its jobs left running stopped. For a
   * command that must not run agent work (`rein compact`). Returns what the repair of `id` did.
   */
  closeLog(id: string): Promise<ResumeReport> {
    const sessions = this._deps.ctx.get('sessions') as SessionService | undefined
    // Without sessions the repair itself says what is missing.
    if (!sessions) return this._deps.agents().repair(id)
    return closeLostChild(this._deps.agents(), sessions, this._deps.jobs(), id)
  }

  /**
   * Resolves once the logs of lost background children that reaping found (`jobs/lost`) are
   * closed. A host that ends right after opening a session (a refused `rein resume`) waits for it
   * before it disposes the composition, so the session store is still there to close them.
   */
  async settled(): Promise<void> {
    while (this._closing.size > 0) await Promise.all(this._closing)
  }

  /** The configured profiles by name, as the `agent` argument names them. */
  profiles(): Readonly<Record<string, SubagentProfile>> {
    return this._deps.config.profiles
  }
}
