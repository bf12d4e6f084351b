/** The `ctx.agents` service: creates and resumes agents, and holds the prompt sections plugins add. */

import { Context, Service } from '@deepseek-ai/cordis'
import { ReinError } from '@rein/base'
import { planRepair, repairEvents, type CoreEventData } from '@rein/session'
import { Agent } from './agent.ts'
import { toResultData } from './tool-calls.ts'
import { AgentConfig, type AgentOptions } from './options.ts'
import type { PromptSection } from './sections.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    agents: AgentService
  }
}

export type CreateAgentOptions = Partial<AgentOptions> & { sessionId?: string }

/** What a resume did to the log before handing the agent back. */
export interface ResumeReport {
  /** Calls paired with a `TOOL_NOT_STARTED` or `TOOL_OUTCOME_UNKNOWN` result. */
  paired: { callId: string; name: string; code: string }[]
  /** Replay-safe calls run again. */
  rerun: { callId: string; name: string; isError: boolean }[]
  /** The interrupted turn that was closed, if any. */
  closedTurn?: number
}

interface ServiceState {
  sections: PromptSection[]
  config: AgentConfig
}

export class AgentService extends Service {
  static readonly inject = ['llm', 'tools', 'sessions']
  static readonly Config = AgentConfig

  private _state: ServiceState

  constructor(ctx: Context, config: AgentConfig) {
    super(ctx, 'agents')
    this._state = { sections: [], config }
  }

  /** Adds a part of the system prompt until disposed. Ids are unique. */
  section(section: PromptSection): () => Promise<void> {
    const { sections } = this._state
    if (typeof section.render !== 'function' || typeof section.id !== 'string') throw new ReinError('INVALID_SECTION', 'a prompt section needs an id and a render function')
    return this.ctx.effect(() => {
      if (sections.some((other) => other.id === section.id)) throw new ReinError('DUPLICATE_SECTION', `a prompt section with id "${section.id}" is already registered`)
      sections.push(section)
      return () => {
        const index = sections.indexOf(section)
        if (index >= 0) sections.splice(index, 1)
      }
    }, `agents.section(${section.id})`)
  }

  /** A new agent on a new session. */
  async create(options: CreateAgentOptions = {}): Promise<Agent> {
    const resolved = this.resolve(options)
    const session = await this.ctx.sessions.create({ cwd: resolved.cwd, ...(options.sessionId ? { id: options.sessionId } : {}) })
    return new Agent(session, resolved, this.services())
  }

  /**
   * An agent on a stored session. A log that ends mid-turn is repaired first: replay-safe calls with
   * an unknown outcome are run once more, every other unpaired call is paired with an error result,
   * and the turn is closed as `interrupted`.
   */
  async resume(id: string, options: Partial<AgentOptions> = {}): Promise<{ agent: Agent; repaired: ResumeReport }> {
    const session = await this.ctx.sessions.open(id)
    try {
      const resolved = this.resolve({ cwd: session.header.cwd, ...options })
      const { tools } = this.ctx
      const plan = planRepair(session.events, (name) => tools.get(name)?.replaySafe === true)
      const reruns = new Map<string, CoreEventData['tool/result']>()
      const report: ResumeReport = { paired: [], rerun: [] }
      for (const call of plan.calls) {
        if (call.action !== 'rerun') continue
        const result = await tools.execute({ callId: call.callId, name: call.name, arguments: call.arguments, signal: new AbortController().signal, context: { sessionId: id, cwd: resolved.cwd } })
        reruns.set(call.callId, toResultData(call.callId, result, resolved.maxToolResultChars))
        report.rerun.push({ callId: call.callId, name: call.name, isError: result.isError })
      }
      for (const draft of repairEvents(plan, reruns)) {
        session.append(draft.type, draft.data)
        const data = draft.data as { callId?: string; code?: string }
        const call = plan.calls.find((candidate) => candidate.callId === data.callId)
        if (call && call.action !== 'rerun' && data.code) report.paired.push({ callId: call.callId, name: call.name, code: data.code })
      }
      if (plan.turn !== undefined) report.closedTurn = plan.turn
      await session.flush()
      return { agent: new Agent(session, resolved, this.services()), repaired: report }
    } catch (error) {
      await session.close().catch(() => {})
      throw error
    }
  }

  private resolve(options: CreateAgentOptions): AgentOptions {
    const { config } = this._state
    const merged = { ...config, ...stripUndefined(options) }
    const provider = merged.provider
    const model = merged.model
    if (!provider || !model) {
      throw new ReinError('NO_MODEL', 'no provider/model configured: set provider and model on the agents row in cordis.yml, or pass them')
    }
    const resolved: AgentOptions = { ...merged, provider, model, cwd: options.cwd ?? process.cwd() }
    if (resolved.maxCost !== undefined && !this.ctx.llm.resolveModel(provider, model)?.pricing) {
      throw new ReinError('MAX_COST_UNPRICED', `maxCost is set but ${provider}/${model} has no pricing in its provider's model catalog, so cost cannot be counted; add pricing or drop maxCost`)
    }
    return resolved
  }

  private services() {
    const { sections } = this._state
    return { llm: this.ctx.llm, tools: this.ctx.tools, sections: () => sections }
  }
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>
}
