/**
 * One turn as a sequence of named phases: begin → for each step (prepare the request → stream the
 * answer → commit it → run its tools → end the step) → end the turn. Whatever throws, the turn ends
 * with a recorded outcome and every tool call paired.
 */

import {
  BlockAssembler, assistantMessage, userMessage,
  type ContentBlock, type LlmEvent, type LlmRuntime, type Message, type ModelRoute, type Resend, type StreamChunk, type ToolCallBlock,
} from '@rein/llm'
import { isReinError, messageOf, ReinError } from '@rein/base'
import type { Session, TurnEndReason, TurnOverrun } from '@rein/session'
import type { ApprovalService, ToolRegistry, ToolSchema } from '@rein/tools'
import type { Tally } from './accounting.ts'
import { outputCap, overBudget, ownLimit, planRequest, type OutputCap, type PlannedRequest } from './budget.ts'
import { parentSpent, spentByTree, type BudgetLeft, type Charge, type TreeSpend } from './tree-budget.ts'
import type { CallIds } from './call-ids.ts'
import type { AgentEvent, TreeUsage, TurnResult } from './events.ts'
import { latestUserMessage, runIdentity, type ParentRun } from './identity.ts'
import type { Notify } from './lifecycle.ts'
import { attemptStarted, priceOf, recordAttempt } from './attempts.ts'
import { keepFailedAttempt, markResend } from './resend.ts'
import { StreamProgress } from './stream-progress.ts'
import type { AgentOptions } from './options.ts'
import { nextHeader, type RequestHeader } from './request-header.ts'
import { buildSystem, type PromptSection } from './sections.ts'
import { IntentNotDurable, pairRest, runToolCalls } from './tool-calls.ts'
import { TurnState } from './turn-state.ts'
import { compactBeforeRequest } from './compaction/step.ts'
import type { ContextMeter, Tokenizer } from './compaction/meter.ts'
import type { CompactionAsked } from './compaction/step.ts'

/** The services a turn uses, resolved again at every step so a hot swap applies at the next one. */
export interface TurnServices {
  llm(): LlmRuntime
  tools(): ToolRegistry
  /** The `approval` service as the agent's own context sees it (calls that need approval ask it). */
  approval(): ApprovalService | undefined
  sections(): readonly PromptSection[]
  /** The tokenizer the context meter counts with. */
  tokens(): Tokenizer
  /** Logs a warning once per `key` for the process. */
  warnOnce(key: string, text: string): void
  /** Logs what broke a turn unexpectedly (a throw no phase expected). */
  report(error: unknown): void
  /** Sends a lifecycle event on the service's context. */
  notify: Notify
}

export interface TurnContext {
  session: Session
  options: AgentOptions
  services: TurnServices
  signal: AbortSignal
  callIds: CallIds
  /** The last request header in the log, so a step need not search the log for it. */
  headers: { last?: RequestHeader }
  /** Pinned section texts recorded in the log; grows when a section is pinned. */
  pins: Map<string, string>
  /** Messages plugins injected, appended at the next step boundary. */
  inbox: Message[]
  /** This run's id, and the run that made this agent when it is a subagent. */
  run: { runId: string; parent?: ParentRun }
  /** The tools this agent may see; undefined = all. */
  visible: ((name: string) => boolean) | undefined
  /** The agent's totals over every turn. */
  totals: Tally
  /** The agent's context meter, a compaction asked for (`agent.compact`, or a refusal for length), taken once. */
  compaction: { meter: ContextMeter; take(): CompactionAsked | undefined; overflowed(): void }
  /** What this turn's subagents spend, counted against its budgets; `began` hands the agent the turn's state. */
  tree: TreeSpend
  /** What subagents spent for this run before it started (a resume's repair, background ones while no turn ran): in its result only. */
  carried: readonly TreeSpend[]
  began: (state: TurnState) => void
  /** For a subagent: tells its parent's running turn what this one spends, and what that turn has left. */
  charge: Charge | undefined
  parentLeft: (() => BudgetLeft | undefined) | undefined
  emit: (event: AgentEvent) => void
}

type TurnEnd = { reason: TurnEndReason; error?: { code: string; message: string }; overrun?: TurnOverrun }

type FallbackEvent = Extract<LlmEvent, { type: 'fallback' }>

interface PreparedStep {
  llm: LlmRuntime
  tools: ToolRegistry
  route: ModelRoute
  system: string
  schemas: readonly ToolSchema[]
  planned: PlannedRequest
}

interface Answer {
  assembler: BlockAssembler
  /** The route that answered, after any fallback. */
  used: ModelRoute
  /** The output cap the answering attempt was sent under. */
  capped: OutputCap
  /** Why a retry or fallback was not sent: the log could not be saved before it. */
  unsaved?: unknown
  /** Why a retry or fallback was not sent: the failed attempts used up a budget. */
  overrun?: { code: string; message: string }
}

export async function runTurn(context: TurnContext, text: string | undefined): Promise<TurnResult> {
  const state = beginTurn(context, text)
  let end: TurnEnd
  try {
    end = await runSteps(context, state)
  } catch (error) {
    end = failed(context, error)
  }
  return endTurn(context, state, end)
}

async function runSteps(context: TurnContext, state: TurnState): Promise<TurnEnd> {
  const { maxSteps } = context.options
  let overflowed = false
  for (let step = 1; ; step++) {
    const byChildren = context.tree.steps
    if (step + byChildren > maxSteps) return { reason: 'budget', error: { code: 'MAX_STEPS', message: `the turn reached its limit of ${maxSteps} ${maxSteps === 1 ? 'request' : 'requests'}${byChildren > 0 ? ` (${byChildren} of them made by its subagents)` : ''}` } }
    // Checked before every request: subagents may have spent what was left while the tools ran,
    // and siblings running at once share what the parent's turn has left.
    const gone = budgetGone(context, state)
    if (gone) return { reason: 'budget', error: gone }
    const prepared = await prepareRequest(context, state, step)
    if ('end' in prepared) return prepared.end
    const unsaved = await save(context.session, 'the request was not sent')
    if (unsaved) return unsaved
    const answer = await streamAnswer(context, state, prepared)
    if (answer.unsaved !== undefined) return notSaved(answer.unsaved, 'the request was not sent again')
    if (answer.overrun) return { reason: 'budget', error: answer.overrun }
    // The provider counted more than the meter did and refused the request: compact, and ask once more.
    if (!overflowed && refusedAsTooLong(context, answer)) {
      const unknown = windowUnknown(prepared, answer)
      if (unknown) return unknown
      overflowed = true
      state.closeStep()
      context.compaction.overflowed()
      continue
    }
    const committed = await commitAnswer(context, state, prepared, answer)
    if ('end' in committed) return committed.end
    const stopped = await runTools(context, state, prepared, committed.calls)
    if (stopped) return stopped
    state.closeStep()
    if (context.signal.aborted) return cancelled(context.signal)
  }
}

function beginTurn(context: TurnContext, text: string | undefined): TurnState {
  const { session, options, run } = context
  const turn = session.turns + 1
  const message = text === undefined ? undefined : userMessage(text)
  const identity = runIdentity({ agent: options.name, sessionId: session.id, turn, runId: run.runId, anchor: message?.id ?? latestUserMessage(session.messages()), ...(run.parent ? { parent: run.parent } : {}) })
  const { runId, turnId, anchor, parentRunId, parentCallId } = identity
  session.append('turn/start', { turn, runId, turnId, anchor, ...(parentRunId ? { parentRunId, ...(parentCallId ? { parentCallId } : {}), conversationId: identity.conversationId } : {}) })
  if (message) session.append('user/message', { message })
  context.emit({ type: 'turn-start', turn })
  const state = new TurnState(turn, identity, session, context.services.notify)
  context.began(state)
  context.services.notify('agent/turn-start', () => ({ identity, turn, startedAt: state.startedAt }))
  return state
}

/**
 * The step boundary: injected messages join the log, then the services are resolved, the system
 * text and options built, the context compacted if need be, and the step opened in the log.
 */
async function prepareRequest(context: TurnContext, state: TurnState, step: number): Promise<PreparedStep | { end: TurnEnd }> {
  const { options, services, session, headers } = context
  for (const message of context.inbox.splice(0)) session.append('user/message', { message })
  const llm = services.llm()
  const tools = services.tools()
  const route = { provider: options.provider, model: options.model }
  const { system, fresh } = await systemText(context, state, llm)
  let schemas = tools.schemas(context.visible, state.identity)
  const counted = state.tally.counted
  // Before the step opens: a compaction's event and its summary request come between steps. The
  // first compaction makes `recall_result` available: the request it shortens offers it already.
  if (await compactBeforeRequest(context, state, { llm, tools, route, system, schemas })) schemas = tools.schemas(context.visible, state.identity)
  // The summary request counts against the turn's budgets: once it spent what was left, no request goes out for the rest.
  const spent = state.tally.counted > counted ? budgetGone(context, state) : undefined
  if (spent) return { end: { reason: 'budget', error: spent } }
  // A subagent asks for no more than its parent's turn has left now, whatever its own budget says.
  const planned = planRequest(options, llm, spentByTree(state.tally, context.tree), context.parentLeft?.())
  state.openStep(step, planned.request)
  context.charge?.({ steps: 1 })
  const header = nextHeader(headers.last, route, system, schemas, fresh)
  if (header) {
    session.append('request/header', header)
    headers.last = header
  }
  return { llm, tools, route, system, schemas, planned }
}

/** The system text, pinned sections read from the log and newly pinned ones remembered. */
async function systemText(context: TurnContext, state: TurnState, llm: LlmRuntime): Promise<{ system: string; fresh: Record<string, string> }> {
  const { options, services, session, signal } = context
  // Adapters that look models up answer once; budgets and prices below read the answer.
  await Promise.all([{ provider: options.provider, model: options.model }, ...options.fallbacks].map((entry) => llm.modelInfo(entry.provider, entry.model, signal)))
  const sectionContext = { cwd: options.cwd, workspaceRoot: options.workspaceRoot ?? options.cwd, sessionId: session.id, identity: state.identity, signal }
  const { system, fresh } = await buildSystem(options.system, services.sections(), sectionContext, context.pins)
  for (const [id, text] of Object.entries(fresh)) context.pins.set(id, text)
  return { system, fresh }
}

/** The budget the turn (or, for a subagent, its parent's turn) has used up, if any. */
function budgetGone(context: TurnContext, state: TurnState): { code: string; message: string } | undefined {
  return overBudget(context.options, spentByTree(state.tally, context.tree)) ?? parentSpent(context.parentLeft?.())
}

/** One model request, streamed to listeners; attempts, retries and fallbacks go into the log as they happen. */
async function streamAnswer(context: TurnContext, state: TurnState, prepared: PreparedStep): Promise<Answer> {
  const { session, options, signal } = context
  const { request } = prepared.planned
  const assembler = new BlockAssembler()
  let used = prepared.route
  const messages = session.messages()
  // Named keys first, then the optional ones: not a spread-first literal, slow on Node 20 (docs/architecture.md, Conventions).
  const input = { messages, ...(prepared.system ? { system: prepared.system } : {}), ...(prepared.schemas.length > 0 ? { tools: prepared.schemas } : {}) }
  // Only a telemetry sink that opted into content calls it; a block that cannot be built is left out.
  const output = () => { try { return assembler.blocks() } catch { return [] } }
  const resends = new ResendGuard(context, state, prepared.planned)
  const progress = new StreamProgress(session)
  // By read, not by chunk: one await for all the chunks that arrived together.
  const stream = prepared.llm.streamBatches({
    provider: prepared.route.provider,
    model: prepared.route.model,
    fallbacks: options.fallbacks,
    ...input,
    ...(options.maxTokens !== undefined ? { maxTokens: options.maxTokens } : {}),
    ...(prepared.planned.cap !== undefined ? { maxTokensCap: resends.cap } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.reasoningEffort !== undefined ? { reasoningEffort: request.reasoningEffort } : {}),
    signal,
    beforeResend: resends.beforeResend,
    onEvent: (event) => {
      if (event.type === 'fallback') {
        resends.hold(event)
        return
      }
      if (event.type === 'attempt-start') {
        progress.restart()
        for (const fallback of resends.sent()) {
          session.append('llm/fallback', fallback)
          context.emit(fallback)
          used = fallback.to
        }
        context.services.notify('agent/llm-start', () => attemptStarted(state, prepared.llm, event, input))
        return
      }
      context.emit(event)
      if (event.type === 'attempt') recordAttempt(context, state, prepared.llm, event, input, output)
      else {
        session.append('llm/retry', event)
        keepFailedAttempt(session)
      }
    },
  })
  for await (const batch of stream) {
    for (const chunk of batch) {
      // A cancel while a chunk is handled drops the rest of its read, as it would the next chunks: the stream then ends aborted.
      if (signal.aborted && chunk.type !== 'finish') break
      assembler.push(chunk)
      progress.add(chunk)
      forward(context, chunk)
    }
  }
  // What this request's reported input covers: the meter adds only what is appended or changed after it.
  context.compaction.meter.observe(assembler.usage, prepared.system, prepared.schemas, messages.length)
  const { capped, unsaved, overrun } = resends
  return { assembler, used, capped, ...(unsaved !== undefined ? { unsaved } : {}), ...(overrun ? { overrun } : {}) }
}

/**
 * What a step's request needs before each attempt after its first: the failed attempts spent the
 * turn's budgets too, so a retry or fallback is sent only while they last (`overrun` says why not),
 * asks for no more output than they left (`cap`, read before every attempt: the last read is the
 * answering attempt's, which a cut answer is judged by), and is logged durably first (`unsaved`).
 * A fallback is logged only once its attempt starts: the runtime announces it before asking
 * `beforeResend`, which may refuse it.
 */
class ResendGuard {
  capped: OutputCap
  unsaved: unknown
  overrun: Answer['overrun']
  private held: FallbackEvent[] = []

  constructor(private readonly context: TurnContext, private readonly state: TurnState, planned: PlannedRequest) {
    this.capped = { ...(planned.cap !== undefined ? { cap: planned.cap } : {}), capByParent: planned.capByParent === true }
  }

  readonly cap = (): number | undefined => {
    const { context, state } = this
    this.capped = outputCap(context.options, spentByTree(state.tally, context.tree), context.parentLeft?.())
    return this.capped.cap
  }

  /** Keeps a fallback the runtime announced until an attempt on it starts (see `sent`). */
  hold(event: FallbackEvent): void {
    this.held.push(event)
  }

  /** The fallbacks that led to the attempt starting now, in order; a pass over a cooling route adds one. */
  sent(): FallbackEvent[] {
    return this.held.splice(0)
  }

  readonly beforeResend = (next: Resend): Promise<void> => {
    this.overrun = budgetGone(this.context, this.state)
    if (this.overrun) return Promise.reject(new ReinError(this.overrun.code, this.overrun.message))
    return markResend(this.context.session, next).catch((error: unknown) => {
      this.unsaved = error
      throw error
    })
  }
}

/** Logs the answer and decides what comes next: its tool calls, or how the turn ends. */
async function commitAnswer(context: TurnContext, state: TurnState, prepared: PreparedStep, answer: Answer): Promise<{ end: TurnEnd } | { calls: ToolCallBlock[] }> {
  const { session, options } = context
  const { assembler, used } = answer
  const finish = assembler.finish ?? { reason: 'error' as const, failure: { code: 'STREAM_CLOSED' as const, message: 'the stream ended without a finish' } }
  if (finish.reason === 'error' || finish.reason === 'aborted') return { end: streamFailed(context, state, assembler, used, finish) }

  const blocks = context.callIds.assign(assembler.blocks())
  const usage = assembler.usage
  const cost = usage ? priceOf(prepared.llm, used, usage) : undefined
  session.append('assistant/message', {
    message: assistantMessage(blocks, { kind: 'model', ...used, ...(finish.replayState !== undefined ? { replayState: finish.replayState } : {}) }),
    ...(usage ? { usage } : {}),
    provider: used.provider,
    model: used.model,
    ...(cost !== undefined ? { cost } : {}),
  })
  state.text = textOf(blocks)
  const calls = blocks.filter((block): block is ToolCallBlock => block.type === 'tool-call')
  state.asked(calls)
  // An answer with tool calls is made durable with the calls' intents, before any tool runs
  // (runToolCalls): one fsync for both. An answer no tool follows is saved with the step's end.
  const over = overBudget(options, spentByTree(state.tally, context.tree))
  if (over) {
    // The answer arrived: a final one completes the turn, with the overrun noted. Budgets stop further steps.
    if (calls.length === 0 && finish.reason === 'stop') return { end: { reason: 'completed', overrun: over } }
    pairRest({ state, tools: prepared.tools, emit: context.emit }, 'BUDGET_EXCEEDED', over.message)
    return { end: { reason: 'budget', error: over } }
  }
  if (finish.reason === 'max-tokens') return { end: outputLimit(answer.capped, ownLimit(options, prepared.llm, used)) }
  if (calls.length === 0) return { end: { reason: 'completed' } }
  return { calls }
}

/** A refusal for length that showed nothing, with compaction on: worth compacting and asking again. */
function refusedAsTooLong(context: TurnContext, answer: Answer): boolean {
  const finish = answer.assembler.finish
  return finish?.reason === 'error' && finish.failure?.code === 'CONTEXT_WINDOW_EXCEEDED' && context.options.compaction.mode !== 'off' && answer.assembler.interruptedBlocks().length === 0
}

/** A refusal for length that compaction cannot answer: with no known window there is nothing to compact against. */
function windowUnknown(prepared: PreparedStep, answer: Answer): TurnEnd | undefined {
  const { provider, model } = prepared.route
  if (prepared.llm.resolveModel(provider, model)?.contextWindow !== undefined) return undefined
  // A provider's sentence ends in a full stop, which would come before the `;` this joins it with.
  const refusal = (answer.assembler.finish?.failure?.message ?? 'the provider refused the request as too long').replace(/\.\s*$/, '')
  return { reason: 'error', error: { code: 'CONTEXT_WINDOW_EXCEEDED', message: `${refusal}; the context window of ${provider}/${model} is not known, so the conversation could not be compacted to fit it (give it contextWindow in its provider's models)` } }
}

function streamFailed(context: TurnContext, state: TurnState, assembler: BlockAssembler, used: ModelRoute, finish: NonNullable<BlockAssembler['finish']>): TurnEnd {
  const shown = assembler.interruptedBlocks()
  if (shown.length > 0) {
    context.session.append('assistant/message', { message: assistantMessage(shown, { kind: 'model', ...used }), provider: used.provider, model: used.model, interrupted: true })
    // The turn's text is its last assistant message's, cut off as it is.
    state.text = textOf(shown)
  }
  if (context.signal.aborted) return cancelled(context.signal)
  // Aborted with nobody asking (the llm service was stopped under the stream): rein went away, the
  // person did not cancel.
  if (finish.reason === 'aborted') return { reason: 'interrupted' }
  const failure = finish.failure ?? { code: 'TRANSPORT', message: 'the provider ended the stream with an error' }
  return { reason: 'error', error: { code: failure.code, message: failure.message } }
}

async function runTools(context: TurnContext, state: TurnState, prepared: PreparedStep, calls: readonly ToolCallBlock[]): Promise<TurnEnd | undefined> {
  const { session, options, signal, emit } = context
  try {
    await runToolCalls(calls, {
      session, state, tools: prepared.tools, signal, emit,
      cwd: options.cwd,
      workspaceRoot: options.workspaceRoot ?? options.cwd,
      identity: state.identity,
      visible: context.visible,
      maxParallel: options.maxParallelToolCalls,
      spill: { chars: options.spillAfterChars, lines: options.spillAfterLines },
      notify: context.services.notify,
      approval: () => context.services.approval(),
    })
  } catch (error) {
    if (!(error instanceof IntentNotDurable)) throw error
    return notSaved(error.reason, 'the tools were not run')
  }
  return undefined
}

/** Closes what is still open — calls, the step — writes `turn/end` and makes it durable. */
async function endTurn(context: TurnContext, state: TurnState, end: TurnEnd): Promise<TurnResult> {
  const { session, emit } = context
  let final = end
  try {
    state.pairRest('TOOL_NOT_STARTED', `the turn ended (${end.reason})`)
    // Calls left for `recover` keep the step and turn open: the next resume pairs them and closes both.
    if (!state.leftOpen) {
      state.closeStep()
      session.append('turn/end', { turn: state.turn, ...end })
    }
    await session.flush()
  } catch (error) {
    final = { reason: 'error', error: { code: isReinError(error) ? error.code : 'SESSION_FLUSH_FAILED', message: messageOf(error) } }
  }
  emit({ type: 'turn-end', turn: state.turn, ...final })
  const { tally } = state
  context.services.notify('agent/turn-end', () => ({
    identity: state.identity,
    turn: state.turn,
    startedAt: state.startedAt,
    endedAt: Date.now(),
    reason: final.reason,
    ...(final.error ? { errorCode: final.error.code } : {}),
    // A copy: a listener must not be able to change the turn's result.
    usage: { ...tally.usage },
    ...(tally.cost !== undefined ? { cost: tally.cost } : {}),
  }))
  return {
    turn: state.turn,
    runId: state.identity.runId,
    ...final,
    usage: tally.usage,
    ...(tally.cost !== undefined ? { cost: tally.cost } : {}),
    ...(tally.estimated ? { usageEstimated: true as const } : {}),
    ...subagentsSpend(context.tree, context.carried),
    text: state.text,
  }
}

/** The turn's subagents' spend for its result, what was carried into it included; nothing when none reported usage. */
function subagentsSpend(tree: TreeSpend, carried: readonly TreeSpend[]): { subagents?: TreeUsage } {
  const tally = carried.reduce((sum, spent) => (spent.tally.counted > 0 ? sum.plus(spent.tally) : sum), tree.tally)
  if (tally.counted === 0) return {}
  return { subagents: { usage: tally.usage, ...(tally.cost !== undefined ? { cost: tally.cost } : {}), ...(tally.estimated ? { usageEstimated: true as const } : {}) } }
}

/**
 * A throw no phase handled: the turn ends `error` with the thrower's code. Only a throw that is not
 * a ReinError is logged as unexpected: a typed one (a full context, a log that could not be saved)
 * says what went wrong in the turn's result, which its caller shows.
 */
function failed(context: TurnContext, error: unknown): TurnEnd {
  if (context.signal.aborted) return cancelled(context.signal)
  if (!isReinError(error)) context.services.report(error)
  return { reason: 'error', error: { code: isReinError(error) ? error.code : 'INTERNAL_ERROR', message: messageOf(error) } }
}

/** `interrupted` when the agent's owner went away (dispose, a closing store), `aborted` on a cancel. */
function cancelled(signal: AbortSignal): TurnEnd {
  return { reason: isReinError(signal.reason, 'INTERRUPTED') ? 'interrupted' : 'aborted' }
}

/** A cut answer: a budget cut it when its cap was below the answering route's own limit. */
function outputLimit({ cap, capByParent }: OutputCap, own: number | undefined): TurnEnd {
  if (cap !== undefined && (own === undefined || cap < own)) {
    const whose = capByParent ? 'its parent\'s turn had left for its subagents' : 'the turn had left'
    return { reason: 'budget', error: { code: 'MAX_OUTPUT_TOKENS', message: `the answer was cut at the ${cap} output tokens ${whose} (maxOutputTokens)` } }
  }
  const limit = own === undefined ? "the provider's default output limit" : `its output limit of ${own} tokens`
  return { reason: 'max-tokens', error: { code: 'MAX_TOKENS', message: `the answer reached ${limit} for one request; any tool call in it was dropped` } }
}

async function save(session: Session, consequence: string): Promise<TurnEnd | undefined> {
  try {
    await session.flush()
    return undefined
  } catch (error) {
    return notSaved(error, consequence)
  }
}

function notSaved(error: unknown, consequence: string): TurnEnd {
  return { reason: 'error', error: { code: 'SESSION_FLUSH_FAILED', message: `${messageOf(error)}; ${consequence}` } }
}

function forward(context: TurnContext, chunk: StreamChunk) {
  if (chunk.type === 'text-delta') context.emit({ type: 'text-delta', text: chunk.text })
  else if (chunk.type === 'reasoning-delta') context.emit({ type: 'reasoning-delta', text: chunk.text })
  else if (chunk.type === 'discard') context.emit({ type: 'discard' })
}

function textOf(blocks: readonly ContentBlock[]): string {
  return blocks.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

