/**
 * `Agent`: one conversation bound to one session. `send` runs a turn: steps of (flush → request →
 * stream → assistant message → tool calls) until the model stops asking for tools, a budget is
 * reached, the turn is cancelled, or something fails. Whatever happens, every tool call ends up
 * paired with exactly one result and the turn is closed in the log.
 */

import {
  addUsage, assistantMessage, BlockAssembler, userMessage,
  type LlmRuntime, type ModelRoute, type StreamChunk, type TokenUsage, type ToolCallBlock,
} from '@rein/llm'
import { ReinError } from '@rein/base'
import type { Session, TurnEndReason } from '@rein/session'
import type { ToolRegistry } from '@rein/tools'
import type { AgentEvent, TurnResult } from './events.ts'
import type { AgentOptions } from './options.ts'
import { findLastHeader, nextHeader, type RequestHeader } from './request-header.ts'
import { buildSystem, type PromptSection } from './sections.ts'
import { IntentNotDurable, runToolCalls, unrun } from './tool-calls.ts'

export interface AgentServices {
  llm: LlmRuntime
  tools: ToolRegistry
  sections: () => readonly PromptSection[]
}

type TurnEnd = { reason: TurnEndReason; error?: { code: string; message: string } }

const ZERO: TokenUsage = { inputTokens: 0, outputTokens: 0 }

export class Agent {
  private _running: Promise<TurnResult> | undefined
  private _controller: AbortController | undefined
  private readonly _listeners = new Set<(event: AgentEvent) => void>()
  private _usage: TokenUsage = ZERO
  private _cost = new CostCounter()
  /** The last request header in the log, kept here so a step need not search the log for it. */
  private _header: RequestHeader | undefined

  constructor(readonly session: Session, readonly options: AgentOptions, private readonly services: AgentServices) {
    this._header = findLastHeader(session.events)
  }

  get status(): 'idle' | 'running' {
    return this._running ? 'running' : 'idle'
  }

  /** Usage over every request this handle made. */
  get usage(): TokenUsage {
    return this._usage
  }

  /** Money over every request this handle made; undefined while none was made or once any model used was unpriced. */
  get cost(): number | undefined {
    return this._cost.total
  }

  /** Listens to what the agent does; returns the unsubscribe function. */
  subscribe(listener: (event: AgentEvent) => void): () => void {
    this._listeners.add(listener)
    return () => this._listeners.delete(listener)
  }

  /** Starts a turn with a user message. One turn at a time: `AGENT_BUSY` otherwise. */
  send(text: string): Promise<TurnResult> {
    return this.start(text)
  }

  /** Starts a turn without a new message: the model answers what the log already holds (after a resume). */
  continue(): Promise<TurnResult> {
    return this.start(undefined)
  }

  /** Cancels the running turn: the stream stops, running tools see their signal, unstarted calls are paired. */
  cancel(reason = 'cancelled'): void {
    this._controller?.abort(new Error(reason))
  }

  async whenIdle(): Promise<void> {
    await this._running?.catch(() => {})
  }

  /** Waits for the turn, then flushes and releases the session. */
  async close(): Promise<void> {
    await this.whenIdle()
    await this.session.close()
  }

  private start(text: string | undefined): Promise<TurnResult> {
    if (this._running) return Promise.reject(new ReinError('AGENT_BUSY', 'the agent is already running a turn; wait for it or cancel it'))
    const controller = new AbortController()
    this._controller = controller
    const running = this.runTurn(text, controller.signal).finally(() => {
      this._running = undefined
      this._controller = undefined
    })
    this._running = running
    return running
  }

  private emit(event: AgentEvent) {
    for (const listener of this._listeners) {
      try {
        listener(event)
      } catch {
        // A UI listener's failure must not break the turn.
      }
    }
  }

  private async runTurn(text: string | undefined, signal: AbortSignal): Promise<TurnResult> {
    const { session, options } = this
    const turn = session.events.filter((event) => event.type === 'turn/start').length + 1
    let usage: TokenUsage = ZERO
    const cost = new CostCounter()
    let lastText = ''
    session.append('turn/start', { turn })
    if (text !== undefined) session.append('user/message', { message: userMessage(text) })
    this.emit({ type: 'turn-start', turn })

    const end = async (result: TurnEnd): Promise<TurnResult> => {
      session.append('turn/end', { turn, ...result })
      let final = result
      try {
        await session.flush()
      } catch (error) {
        final = { reason: 'error', error: { code: 'SESSION_FLUSH_FAILED', message: (error as Error).message } }
      }
      this.emit({ type: 'turn-end', turn, ...final })
      return { turn, ...final, usage, ...(cost.total !== undefined ? { cost: cost.total } : {}), text: lastText }
    }
    const closeStep = (step: number, result: TurnEnd) => {
      session.append('step/end', { turn, step })
      return end(result)
    }
    const notSaved = (error: unknown, consequence: string): TurnEnd => ({ reason: 'error', error: { code: 'SESSION_FLUSH_FAILED', message: `${(error as Error).message}; ${consequence}` } })
    /** Pairs calls that will not run with an error result each. */
    const pair = (calls: readonly ToolCallBlock[], code: string, why: string) => {
      for (const call of calls) session.append('tool/result', unrun(call, code, `${call.name} ${why}`))
    }

    for (let step = 1; ; step++) {
      if (step > options.maxSteps) return end({ reason: 'budget', error: { code: 'MAX_STEPS', message: `the turn reached its limit of ${options.maxSteps} requests` } })
      session.append('step/start', { turn, step })
      const route: ModelRoute = { provider: options.provider, model: options.model }
      const system = buildSystem(options.system, this.services.sections(), { cwd: options.cwd, sessionId: session.id })
      const tools = this.services.tools.schemas()
      const header = nextHeader(this._header, route, system, tools)
      if (header) {
        session.append('request/header', header)
        this._header = header
      }
      try {
        await session.flush()
      } catch (error) {
        return closeStep(step, notSaved(error, 'the request was not sent'))
      }

      const streamed = await this.request(route, system, tools, signal)
      const { assembler, used } = streamed
      const finish = assembler.finish ?? { reason: 'error' as const, failure: { code: 'STREAM_CLOSED' as const, message: 'the stream ended without a finish' } }

      if (finish.reason === 'error' || finish.reason === 'aborted') {
        const shown = assembler.interruptedBlocks()
        if (shown.length > 0) {
          session.append('assistant/message', { message: assistantMessage(shown, { kind: 'model', ...used }), provider: used.provider, model: used.model, interrupted: true })
        }
        if (finish.reason === 'aborted' || signal.aborted) return closeStep(step, { reason: 'aborted' })
        return closeStep(step, { reason: 'error', error: { code: finish.failure!.code, message: finish.failure!.message } })
      }

      const blocks = assembler.blocks()
      const stepUsage = assembler.usage
      const stepCost = stepUsage ? this.services.llm.costOf(used.provider, used.model, stepUsage) : undefined
      session.append('assistant/message', {
        message: assistantMessage(blocks, { kind: 'model', ...used, ...(finish.replayState !== undefined ? { replayState: finish.replayState } : {}) }),
        ...(stepUsage ? { usage: stepUsage } : {}),
        provider: used.provider,
        model: used.model,
        ...(stepCost !== undefined ? { cost: stepCost } : {}),
      })
      if (stepUsage) {
        usage = addUsage(usage, stepUsage)
        this._usage = addUsage(this._usage, stepUsage)
        cost.add(stepCost)
        this._cost.add(stepCost)
        const totalCost = this._cost.total
        this.emit({ type: 'usage', usage: stepUsage, ...(stepCost !== undefined ? { cost: stepCost } : {}), total: this._usage, ...(totalCost !== undefined ? { totalCost } : {}), finish: finish.reason })
      }
      lastText = blocks.filter((block) => block.type === 'text').map((block) => block.text).join('')
      const calls = blocks.filter((block): block is ToolCallBlock => block.type === 'tool-call')

      if (calls.length > 0) {
        // The answer cost tokens: make it durable before any tool runs, so a crash cannot lose it.
        try {
          await session.flush()
        } catch (error) {
          pair(calls, 'TOOL_NOT_STARTED', 'did not run: the session could not be saved')
          return closeStep(step, notSaved(error, 'the tools were not run'))
        }
      }
      const over = this.overBudget(usage, cost.total)
      if (over) {
        pair(calls, 'BUDGET_EXCEEDED', `was not run: ${over.message}`)
        return closeStep(step, { reason: 'budget', error: over })
      }
      if (finish.reason === 'max-tokens') {
        return closeStep(step, { reason: 'budget', error: { code: 'MAX_TOKENS', message: 'the answer reached the output limit for one request (maxTokens); any tool call in it was dropped' } })
      }
      if (calls.length === 0) return closeStep(step, { reason: 'completed' })
      try {
        await runToolCalls(calls, {
          session,
          tools: this.services.tools,
          signal,
          cwd: options.cwd,
          maxParallel: options.maxParallelToolCalls,
          maxResultChars: options.maxToolResultChars,
          emit: (event) => this.emit(event),
        })
      } catch (error) {
        if (!(error instanceof IntentNotDurable)) throw error
        return closeStep(step, notSaved(error.reason, 'the tools were not run'))
      }
      session.append('step/end', { turn, step })
      if (signal.aborted) return end({ reason: 'aborted' })
    }
  }

  /** One model request, streamed to listeners; retries and fallbacks go into the log as they happen. */
  private async request(route: ModelRoute, system: string, tools: ReturnType<ToolRegistry['schemas']>, signal: AbortSignal) {
    const { session, options } = this
    const assembler = new BlockAssembler()
    let used = route
    const stream = this.services.llm.stream({
      ...route,
      ...(system ? { system } : {}),
      messages: session.messages(),
      ...(tools.length > 0 ? { tools } : {}),
      fallbacks: options.fallbacks,
      ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
      ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
      ...(options.reasoningEffort !== undefined ? { reasoningEffort: options.reasoningEffort } : {}),
      signal,
      onEvent: (event) => {
        if (event.type === 'attempt') return
        if (event.type === 'retry') session.append('llm/retry', event)
        else {
          session.append('llm/fallback', event)
          used = event.to
        }
        this.emit(event)
      },
    })
    for await (const chunk of stream) {
      assembler.push(chunk)
      this.forward(chunk)
    }
    return { assembler, used }
  }

  private forward(chunk: StreamChunk) {
    if (chunk.type === 'text-delta') this.emit({ type: 'text-delta', text: chunk.text })
    else if (chunk.type === 'reasoning-delta') this.emit({ type: 'reasoning-delta', text: chunk.text })
  }

  private overBudget(usage: TokenUsage, cost: number | undefined): { code: string; message: string } | undefined {
    const { maxOutputTokens, maxCost } = this.options
    if (maxOutputTokens !== undefined && usage.outputTokens >= maxOutputTokens) {
      return { code: 'MAX_OUTPUT_TOKENS', message: `the turn used ${usage.outputTokens} output tokens, its limit is ${maxOutputTokens}` }
    }
    if (maxCost !== undefined && cost !== undefined && cost >= maxCost) {
      return { code: 'MAX_COST', message: `the turn cost ${cost.toFixed(4)}, its limit is ${maxCost}` }
    }
    return undefined
  }
}

/** Sums costs; the total is unknown as soon as one request had none (an unpriced model). */
class CostCounter {
  private sum = 0
  private requests = 0
  private unpriced = false

  add(cost: number | undefined) {
    this.requests++
    if (cost === undefined) this.unpriced = true
    else this.sum += cost
  }

  get total(): number | undefined {
    return this.requests === 0 || this.unpriced ? undefined : this.sum
  }
}
