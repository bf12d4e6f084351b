/** The `ctx.tools` service: owns tool registrations and pipeline hooks, and executes calls. */

import { Context, Service, type Fiber, type Logger } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { ReinError, isReinError, kindOf, raceSignal } from '@rein/base'
import { parseArguments } from './arguments.ts'
import type { AnyToolDefinition, Defined, DefinedTool, RawSchema, ToolSource } from './define-tool.ts'
import type { PropertiesSpec, ValueSpec } from './schema-dsl.ts'
import type {
  ApprovalService, ExecuteWrapper, PostExecuteHook, PreExecutePolicy, ResultObserver, ToolCall, ToolGuard, ToolInfo,
} from './hooks.ts'
import { ASK_FOR_BY_DEFAULT, TOOL_EFFECTS, type ToolEffect } from './effects.ts'
import { runPipeline, settle, type ExecuteInput, type PostHook } from './pipeline.ts'
import type { RunIdentity, ToolCallContext, ToolRunFields } from './run-context.ts'
import { CORE_RUN_FIELDS, type Contribution } from './tool-run.ts'
import { failure } from './result.ts'
import { ownerOf } from './owner.ts'
import { describeCall, describeResult, summarizeResult } from './presenters.ts'
import type { ToolCallView, ToolResultView } from './presentation.ts'
import { MAX_TIMEOUT_MS, isTrue, prepareTool, schemaFor, usableBy, type PreparedTool, type ToolSchema } from './registration.ts'
import type { DurableToolResult, ToolResult } from './result.ts'

declare module '@deepseek-ai/cordis' {
  interface Context {
    tools: ToolRegistry
    /** Answers `ask` decisions; optional. Without it, a call that needs approval is denied. */
    approval?: ApprovalService
  }
}

/** The Config of `@rein/tools`: limits, timeouts and which effects ask for approval (see the README). */
export interface ToolRegistryConfig {
  /** Working directory for calls whose context names none. Default: the process's. */
  cwd?: string
  maxArgumentBytes: number
  maxArgumentDepth: number
  /** Deadline, in ms, for tools that declare no `timeoutMs`; a call past it ends as `TOOL_TIMEOUT`. Default 120000. */
  defaultTimeoutMs: number
  /** Effects a call needs approval for (from `ctx.approval`). Default `['write', 'exec']`; `[]` asks for nothing. */
  askFor: ToolEffect[]
}

/** `owner`: the fiber that registered it, for the message when another tool takes its name. */
type Registered = PreparedTool & { logger: Logger; owner: Fiber }
interface RegistryState {
  tools: Map<string, Registered>
  schemas: readonly ToolSchema[] | undefined
  /** The last narrowed list `schemas()` gave: given again while the same tools are usable. */
  narrowed: readonly ToolSchema[] | undefined
  hooks: {
    policies: PreExecutePolicy[]
    guards: ToolGuard[]
    wrappers: ExecuteWrapper[]
    postHooks: PostHook[]
    observers: ResultObserver[]
  }
  contributions: Contribution[]
  logger: Logger
  config: ToolRegistryConfig
}

/** Tools and the hooks around them. Every registration is owned by the calling plugin and leaves with it. */
export class ToolRegistry extends Service {
  static readonly Config: Schema<Partial<ToolRegistryConfig>, ToolRegistryConfig> = Schema.object({
    cwd: Schema.string().description('Working directory for calls that do not name one. Default: process.cwd().'),
    maxArgumentBytes: Schema.natural().min(1).default(1_048_576).description('Largest raw argument string in UTF-8 bytes.'),
    maxArgumentDepth: Schema.natural().min(1).default(64).description('Deepest nesting of arrays and objects in arguments.'),
    defaultTimeoutMs: Schema.natural().min(1).max(MAX_TIMEOUT_MS).default(120_000)
      .description('Deadline in ms for tools that declare no timeoutMs; a call past it ends as TOOL_TIMEOUT.'),
    askFor: Schema.array(Schema.union(TOOL_EFFECTS.map((effect) => Schema.const(effect)))).default([...ASK_FOR_BY_DEFAULT])
      .description('Effects a call needs approval for; [] runs every call without asking.'),
  }) as Schema<Partial<ToolRegistryConfig>, ToolRegistryConfig>

  // Service methods run on cordis's tracing proxy, where every `this.x` read costs a lookup, so
  // the state lives in one plain object that each method reads once.
  private _state: RegistryState

  constructor(ctx: Context, public config: ToolRegistryConfig) {
    super(ctx, 'tools')
    this._state = {
      tools: new Map(),
      schemas: undefined,
      narrowed: undefined,
      hooks: { policies: [], guards: [], wrappers: [], postHooks: [], observers: [] },
      contributions: [],
      logger: ctx.logger('tools'),
      config,
    }
  }

  /** Adds a tool until the returned disposer runs or the calling plugin is disposed. */
  // Two signatures: a definition written in place is checked by the first, as defineTool checks it
  // (its types inferred from its schemas); a tool already typed, alone or in a list of different
  // tools, fits the second, which an object literal the first refused does not (see Defined).
  register<const P extends PropertiesSpec | RawSchema, const O extends ValueSpec | RawSchema>(definition: ToolSource<P, O>): () => Promise<void>
  register<T extends DefinedTool>(definition: Defined<T>): () => Promise<void>
  register(definition: DefinedTool): () => Promise<void> {
    // Erasing A and V is sound: the pipeline only ever passes arguments and values checked against the schemas.
    const tool = prepareTool(definition as unknown as AnyToolDefinition)
    // From the registry's frozen copy from here on: the caller's object may change after this.
    const { name } = tool.definition
    const prepared: Registered = { ...tool, logger: this.ctx.logger(name), owner: this.ctx.fiber }
    const state = this._state
    return this.ctx.effect(() => {
      const first = state.tools.get(name)
      if (first) throw duplicateTool(name, first.owner, prepared.owner)
      state.tools.set(name, prepared)
      state.schemas = undefined
      return () => {
        // Its plugin is going: a body still running would run on with nothing behind it.
        prepared.removed = true
        const stopped = new ReinError('ABORTED', `${name} was stopped: its tool was removed while it ran (its plugin was disposed); its effects may be partial`)
        for (const stop of prepared.running) stop(stopped)
        if (state.tools.get(name) !== prepared) return
        state.tools.delete(name)
        state.schemas = undefined
      }
    }, `tools.register(${name})`)
  }

  /** `tools/pre-execute`: allow, deny or ask. */
  preExecute(policy: PreExecutePolicy) {
    return this.hook(this._state.hooks.policies, policy, 'tools.preExecute')
  }

  /** A policy that can only deny. */
  guard(guard: ToolGuard) {
    return this.hook(this._state.hooks.guards, guard, 'tools.guard')
  }

  /** `tools/execute`: wraps dispatch; the first registered is the outermost. */
  wrapExecute(wrapper: ExecuteWrapper) {
    return this.hook(this._state.hooks.wrappers, wrapper, 'tools.wrapExecute')
  }

  /** `tools/post-execute`: accept, replace or block a successful result, in registration order. */
  postExecute(hook: PostExecuteHook) {
    // Kept with its owner: a message about a wrong value it gives names the hook and its row.
    return this.hook(this._state.hooks.postHooks, { review: hook, owner: this.ctx.fiber }, 'tools.postExecute', hook)
  }

  /** `tools/result`: observes every result. A throwing or rejecting observer is logged and ignored. */
  onResult(observer: ResultObserver) {
    return this.hook(this._state.hooks.observers, observer, 'tools.onResult')
  }

  /**
   * Adds a field to every tool run until disposed (see `ToolRunFields`): `provide` is called once
   * per call with the call as hooks see it. One provider per key (`DUPLICATE_CONTRIBUTION`).
   */
  contribute<K extends Extract<keyof ToolRunFields, string>>(key: K, provide: (call: ToolCall) => ToolRunFields[K] | undefined): () => Promise<void> {
    if (typeof provide !== 'function') throw new ReinError('INVALID_HOOK', `tools.contribute("${key}") needs a function, (call) => the field's value, but got ${kindOf(provide)}`)
    if (CORE_RUN_FIELDS.has(key)) throw new ReinError('INVALID_HOOK', `tools.contribute("${key}"): every tool run has ${key} already; contribute a field of your own name`)
    const { contributions } = this._state
    const contribution: Contribution = { key, provide, logger: this.ctx.logger('tools'), owner: this.ctx.fiber }
    return this.ctx.effect(() => {
      const first = contributions.find((other) => other.key === key)
      if (first) {
        const owner = ownerOf(first.owner).label
        throw new ReinError('DUPLICATE_CONTRIBUTION', `${owner} already contributes "${key}" to tool runs; one provider per key: contribute a field of another name, or load only one of the two`, { details: { key, owner } })
      }
      contributions.push(contribution)
      return () => {
        const index = contributions.indexOf(contribution)
        if (index >= 0) contributions.splice(index, 1)
      }
    }, `tools.contribute(${key})`)
  }

  /**
   * The model-facing schemas, sorted by name and frozen: the same bytes for the same tool set.
   * `visible` narrows them to the tools one agent may use; `identity`, to those available to its run
   * (`availableTo`), each as its run is shown it (`variantFor`).
   */
  schemas(visible?: (name: string) => boolean, identity?: RunIdentity): readonly ToolSchema[] {
    const state = this._state
    const all = state.schemas ??= Object.freeze(sortedNames(state.tools).map((name) => state.tools.get(name)!.schema))
    if (!visible && identity === undefined) return all
    const caller = { ...(visible ? { visible } : {}), ...(identity ? { identity } : {}) }
    const usable = all.flatMap((schema) => {
      const tool = state.tools.get(schema.name)
      return tool !== undefined && usableBy(tool, caller) ? [schemaFor(tool, identity)] : []
    })
    // Nothing left out or narrowed (the usual step): the cached, frozen list, the same object every
    // time. The same list as last time: that list again, so callers can cache by it (hashes, JSON).
    if (usable.length === all.length && usable.every((schema, i) => schema === all[i])) return all
    const last = state.narrowed
    if (last !== undefined && last.length === usable.length && last.every((schema, i) => schema === usable[i])) return last
    return state.narrowed = Object.freeze(usable)
  }

  /** What hooks see of a tool: its metadata, effects and effective replay safety. */
  info(name: string): ToolInfo | undefined {
    return this._state.tools.get(name)?.info
  }

  /** Registered tool names in code-unit order (never locale order, which varies by machine). */
  list(): string[] {
    return sortedNames(this._state.tools)
  }

  /** The registry's frozen copy of a tool's definition. */
  get(name: string): Readonly<AnyToolDefinition> | undefined {
    return this._state.tools.get(name)?.definition
  }

  /** Only an exact `true` counts; unknown tools, invalid arguments and throwing predicates are exclusive. */
  isConcurrencySafe(name: string, rawArguments: string): boolean {
    const tool = this._state.tools.get(name)
    const flag = tool?.definition.isConcurrencySafe
    if (typeof flag !== 'function') return flag === true
    const args = this.softArgs(tool!, rawArguments)
    if (args === undefined) return false
    try {
      return isTrue((flag as (args: unknown) => unknown)(args))
    } catch {
      return false
    }
  }

  /** A card for a pending call; falls back to a generic card for unknown tools or invalid arguments. */
  presentCall(name: string, rawArguments: string): ToolCallView {
    const { tools, logger } = this._state
    const tool = tools.get(name)
    return describeCall(name, rawArguments, tool?.definition, this.argsFor(tool, 'presentCall', rawArguments), tool?.logger ?? logger)
  }

  /** A card for a finished call, from the durable result alone (works on a replayed log). */
  presentResult(name: string, rawArguments: string, result: DurableToolResult): ToolResultView {
    const { tools, logger } = this._state
    const tool = tools.get(name)
    return describeResult(name, result, tool?.definition, this.argsFor(tool, 'presentResult', rawArguments), tool?.logger ?? logger)
  }

  /** One line describing a finished call, for history compression. */
  summarize(name: string, rawArguments: string, result: DurableToolResult): string {
    const { tools, logger } = this._state
    const tool = tools.get(name)
    return summarizeResult(name, result, tool?.definition, this.argsFor(tool, 'summarize', rawArguments), tool?.logger ?? logger)
  }

  /** Runs one call through the pipeline. Never rejects: every failure is a result with `isError: true`. */
  async execute(input: ExecuteInput): Promise<ToolResult> {
    // Methods run on cordis's tracing proxy, where each `this.x` read has a cost: read state once.
    const { tools, hooks, logger, config } = this._state
    const signal = input.signal instanceof AbortSignal ? input.signal : callerSignal(input.signal, input.name)
    if (!(signal instanceof AbortSignal)) return observed(hooks.observers, input, signal, logger)
    if (signal !== input.signal) input = Object.assign({}, input, { signal })
    const tool = tools.get(input.name)
    const result = await runPipeline(input, tool, {
      policies: hooks.policies.slice(),
      guards: hooks.guards.slice(),
      wrappers: hooks.wrappers.slice(),
      postHooks: hooks.postHooks.slice(),
    }, {
      limits: config,
      defaultTimeoutMs: config.defaultTimeoutMs,
      cwd: config.cwd ?? process.cwd(),
      logger: tool?.logger ?? logger,
      approval: approvalFrom(input.approval, () => this.ctx.get('approval')),
      toolNames: () => sortedNames(tools),
      usable: (name, context) => usableBy(tools.get(name), context),
      askFor: config.askFor ?? ASK_FOR_BY_DEFAULT,
      contributions: this._state.contributions.slice(),
    })
    return observed(hooks.observers, input, result, logger)
  }

  /**
   * Asks a tool for the real outcome of a call a crash left without a result (`recover`). Returns
   * the result, or undefined when the tool is gone, has no `recover`, declines, or fails (logged).
   */
  async recover(input: { callId: string; name: string; arguments: string; signal: AbortSignal; context?: ToolCallContext }): Promise<ToolResult | undefined> {
    const { tools, config } = this._state
    const tool = tools.get(input.name)
    const recover = tool?.definition.recover
    if (!tool || !recover) return undefined
    const args = this.softArgs(tool, input.arguments)
    if (args === undefined) return undefined
    // The tool's own deadline applies, as for a call: a recover that never settles cannot hold a resume.
    const timeout = AbortSignal.timeout(tool.info.timeoutMs ?? config.defaultTimeoutMs)
    const deadline = AbortSignal.any([input.signal, timeout])
    // One that continues work (a subagent) is waited for after a stop, until its deadline: it stops
    // what it continued and saves it, before the caller gives the call up for the next resume.
    const waitUntil = tool.info.recoverAfterInterrupt === true ? timeout : deadline
    try {
      const cwd = input.context?.cwd ?? config.cwd ?? process.cwd()
      const workspaceRoot = input.context?.workspaceRoot ?? cwd
      const context = Object.freeze({ cwd, workspaceRoot, signal: deadline, logger: tool.logger, ...(input.context?.sessionId ? { sessionId: input.context.sessionId } : {}) })
      const found = await raceSignal(Promise.resolve(recover.call(tool.definition, Object.freeze({ callId: input.callId, args }), context)), waitUntil)
      if (found === undefined) return undefined
      if (typeof found === 'object' && found !== null && 'error' in found && isReinError(found.error)) return failure(found.error.code, found.error.message)
      if (typeof found !== 'object' || found === null || !('value' in found)) {
        return failure('INVALID_TOOL_OUTPUT', `${input.name}.recover returned something other than {value}, {error: ReinError} or nothing`)
      }
      return settle(tool, input.name, args, found.value, tool.logger)
    } catch (error) {
      // Stopped by the caller (a signal during a resume): no failure of the tool's, and the caller says what it does.
      if (input.signal.aborted) tool.logger.debug('recover for %s (%s) was stopped: %s', input.name, input.callId, error)
      else tool.logger.error('recover for %s (%s) failed; the call gets the usual repair result: %s', input.name, input.callId, error)
      return undefined
    }
  }

  /** The arguments a presenter gets, parsed only for a tool that has it: without one the card is generic. */
  private argsFor(tool: PreparedTool | undefined, presenter: 'presentCall' | 'presentResult' | 'summarize', rawArguments: string) {
    return tool && typeof tool.definition[presenter] === 'function' ? this.softArgs(tool, rawArguments) : undefined
  }

  private softArgs(tool: PreparedTool, rawArguments: string) {
    const parsed = parseArguments(rawArguments, tool.schema.parameters, this._state.config)
    return parsed.ok ? parsed.args : undefined
  }

  /** Adds `item` to `list` as an effect of the calling plugin; `fn` is the function the caller passed. */
  private hook<T>(list: T[], item: T, label: string, fn: unknown = item): () => Promise<void> {
    if (typeof fn !== 'function') throw new ReinError('INVALID_HOOK', `${label}() needs a function, but got ${kindOf(fn)}`)
    return this.ctx.effect(() => {
      list.push(item)
      return () => {
        const index = list.indexOf(item)
        if (index >= 0) list.splice(index, 1)
      }
    }, label)
  }
}


/**
 * The signal of a call whose caller passed no AbortSignal (plain JavaScript, which no type checks):
 * none at all is a call no one can cancel, given one of its own that never aborts (not shared:
 * wrappers and approvals may leave listeners on it). Anything else is refused rather than read as
 * never aborting: an AbortController passed for its signal would not stop the call it was meant to.
 */
function callerSignal(given: unknown, name: string): AbortSignal | ToolResult {
  if (given === undefined || given === null) return new AbortController().signal
  const what = given instanceof AbortController ? 'an AbortController (pass its .signal)' : kindOf(given)
  return failure('INVALID_SIGNAL', `${name} was not run: execute's signal is ${what}, not an AbortSignal; pass an AbortSignal, or leave signal out for a call that cannot be cancelled`)
}

/** `result`, once every observer has seen it. */
function observed(observers: readonly ResultObserver[], input: ExecuteInput, result: ToolResult, logger: Logger): ToolResult {
  // A snapshot: an observer that disposes itself mid-loop must not make the next one skip.
  if (observers.length > 0) notify(observers.slice(), input, result, logger)
  return result
}

/** Calls every observer; a throw or a rejection is logged and goes no further. */
function notify(observers: readonly ResultObserver[], input: ExecuteInput, result: ToolResult, logger: Logger) {
  // Frozen: one observer must not change what the next one sees.
  const request = Object.freeze({
    callId: input.callId,
    toolName: input.name,
    arguments: input.arguments,
    ...(input.context?.sessionId === undefined ? {} : { sessionId: input.context.sessionId }),
  })
  const report = (error: unknown) => logger.error('a tools/result observer failed: %s', error)
  for (const observer of observers) {
    try {
      const returned = observer(request, result)
      if (returned && typeof returned.then === 'function') returned.then(undefined, report)
    } catch (error) {
      report(error)
    }
  }
}

/** `DUPLICATE_TOOL`, naming who registered the name first (as far as cordis knows it) and what to do. */
function duplicateTool(name: string, firstFiber: Fiber, secondFiber: Fiber): ReinError {
  const first = ownerOf(firstFiber)
  const details = { details: { tool: name, owner: first.label } }
  if (firstFiber === secondFiber) {
    return new ReinError('DUPLICATE_TOOL', `a tool named "${name}" is already registered by ${first.label} itself; register it once, or dispose the first registration before registering it again`, details)
  }
  const remedy = first.row && ownerOf(secondFiber).row ? 'remove one of the two rows' : 'dispose the first registration before registering this one'
  return new ReinError('DUPLICATE_TOOL', `a tool named "${name}" is already registered by ${first.label}; give this tool another name, or ${remedy}`, details)
}

/** Code-unit order, never locale order, which differs between machines. */
function sortedNames(tools: Map<string, unknown>): string[] {
  return [...tools.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/**
 * Where a call asks: the getter `execute` was given, or the service itself (a JavaScript caller
 * passes it), else the registry's own. Never a throw later, in the middle of a call.
 */
function approvalFrom(given: unknown, own: () => ApprovalService | undefined): () => ApprovalService | undefined {
  if (typeof given === 'function') return given as () => ApprovalService | undefined
  if (typeof given === 'object' && given !== null && typeof (given as { request?: unknown }).request === 'function') return () => given as ApprovalService
  return own
}
