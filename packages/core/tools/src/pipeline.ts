/** One call through the whole pipeline. Every failure becomes a result; this never rejects. */

import { toFrozenJson, type FrozenJson, type JsonObject, type JsonValue } from '@rein/base'
import type { Fiber, Logger } from '@deepseek-ai/cordis'
import { parseArguments, type ArgumentLimits } from './arguments.ts'
import { dispatch } from './dispatch.ts'
import { describeEffects, type ToolEffect } from './effects.ts'
import type { ApprovalService, ExecuteWrapper, PostExecuteHook, PreExecutePolicy, ToolCall, ToolGuard } from './hooks.ts'
import type { ToolCallContext } from './run-context.ts'
import { buildRun, type Contribution } from './tool-run.ts'
import { validateJson } from './json-schema.ts'
import type { PreparedTool } from './registration.ts'
import { combineDecisions, runGuards } from './policy.ts'
import { failure, toContent, type ToolContent, type ToolResult, type ToolSuccess } from './result.ts'
import { isThenable } from './thenable.ts'
import { ownerOf } from './owner.ts'
import { STOPPED, untilStopped } from './until-stopped.ts'
import { masked, reinErrorParts, thrownKind, thrownText, thrownWords } from './thrown-value.ts'

/** One call for `ctx.tools.execute`: its id, the tool's name, the raw arguments and what it runs in. */
export interface ExecuteInput {
  callId: string
  name: string
  /** The raw JSON string the model produced. */
  arguments: string
  signal: AbortSignal
  context?: ToolCallContext
  /**
   * Where a call that needs approval asks: the caller's `approval` service. Default: the one the
   * registry's own context sees. A caller holding the registry outside cordis's tracing proxy (the
   * agent does) passes its own, so an `approval` isolated to its scope still answers.
   */
  approval?: () => ApprovalService | undefined
}

export interface PipelineHooks {
  policies: readonly PreExecutePolicy[]
  guards: readonly ToolGuard[]
  wrappers: readonly ExecuteWrapper[]
  postHooks: readonly PostHook[]
}

/** A post-execute hook and the fiber that registered it, so a message can say whose hook misbehaved. */
export interface PostHook {
  review: PostExecuteHook
  owner: Fiber
}

export interface PipelineEnv {
  limits: ArgumentLimits
  /** The deadline for tools that declare no `timeoutMs`. */
  defaultTimeoutMs: number
  cwd: string
  logger: Logger
  approval: () => ApprovalService | undefined
  toolNames: () => string[]
  /** Whether the caller may see and run this registered tool: its `visible` list and the tool's `availableTo`. */
  usable: (name: string, context: ToolCallContext | undefined) => boolean
  /** Effects that need approval. */
  askFor: readonly ToolEffect[]
  contributions: readonly Contribution[]
}

export async function runPipeline(
  input: ExecuteInput,
  prepared: PreparedTool | undefined,
  hooks: PipelineHooks,
  env: PipelineEnv,
): Promise<ToolResult> {
  const { name, signal } = input
  if (!prepared || !env.usable(name, input.context)) {
    const known = env.toolNames().filter((other) => env.usable(other, input.context))
    return failure('UNKNOWN_TOOL', `unknown tool "${name}"; available tools: ${known.length ? known.join(', ') : 'none'}`)
  }
  if (signal.aborted) return cancelledBefore(name)

  const parsed = parseArguments(input.arguments, prepared.schema.parameters, env.limits)
  if (!parsed.ok) return failure('INVALID_ARGS', `invalid arguments for ${name}: ${parsed.problems.join('; ')}`)

  // Captured before any hook runs: the body and render get exactly these. Hooks get a frozen view
  // holding the same (deeply frozen) arguments and the tool's metadata, never its definition.
  const args = parsed.args
  const call = callView(input, prepared, args, env.cwd)

  const denial = await admit(call, hooks, env, signal)
  if (denial) return denial
  if (signal.aborted) return cancelledBefore(name)

  const context = input.context
  const definition = prepared.definition
  const timeoutMs = prepared.info.timeoutMs ?? env.defaultTimeoutMs
  const graceMs = prepared.info.cancelGraceMs ?? 0
  const outcome = await dispatch(call, hooks.wrappers, signal, { timeoutMs, graceMs, tool: prepared }, (lazy) => {
    return definition.execute(args, buildRun(call, lazy, env.logger, context, env.contributions))
  })
  if (!outcome.ok) {
    // A tool given a grace may answer a cancel with its own error, which says what it had done.
    const own = graceMs > 0 && outcome.error !== signal.reason && reinErrorParts(outcome.error) !== undefined
    if (signal.aborted && !own) return failure('ABORTED', `${name} was cancelled while running; its effects may be partial`)
    return thrown(name, outcome.error)
  }
  let result = settle(prepared, name, args, outcome.value, env.logger)
  for (const hook of hooks.postHooks) {
    if (result.isError) break
    const reviewed = await untilStopped(review(hook, prepared, call, args, result, env.logger), signal)
    if (reviewed === STOPPED) return failure('ABORTED', `${name} was cancelled while a post-execute hook reviewed its result; the tool had run`)
    result = reviewed
  }
  return result
}

/** The frozen view every hook sees. */
function callView(input: ExecuteInput, prepared: PreparedTool, args: FrozenJson<JsonObject>, defaultCwd: string): ToolCall {
  const context = input.context
  const cwd = context?.cwd ?? defaultCwd
  return Object.freeze({
    callId: input.callId,
    toolName: input.name,
    args,
    cwd,
    workspaceRoot: context?.workspaceRoot ?? cwd,
    tool: prepared.info,
    ...(context?.sessionId === undefined ? {} : { sessionId: context.sessionId }),
    ...(context?.identity === undefined ? {} : { identity: context.identity }),
  })
}

/** The registry's own question: a tool whose effects need approval asks, whatever the policies say. */
function effectDecision(call: ToolCall, askFor: readonly ToolEffect[]): { kind: 'ask'; reason: string } | undefined {
  const needs = call.tool.effects.filter((effect) => askFor.includes(effect))
  return needs.length > 0 ? { kind: 'ask', reason: describeEffects(needs) } : undefined
}

/** Pre-execute policies, approval, then guards. Returns a failure, or nothing to proceed. */
async function admit(call: ToolCall, hooks: PipelineHooks, env: PipelineEnv, signal: AbortSignal): Promise<ToolResult | undefined> {
  const byPolicy = await combineDecisions(hooks.policies, call, signal)
  if (byPolicy === STOPPED) return cancelledBefore(call.toolName)
  if (byPolicy.kind === 'deny') return byPolicy.code === undefined ? failure('DENIED', `${call.toolName} was denied: ${byPolicy.reason}`) : failure(byPolicy.code, byPolicy.reason)
  const byEffects = effectDecision(call, env.askFor)
  const policy = byPolicy.kind === 'ask' ? byPolicy.reason : undefined
  const decision = byEffects && policy !== undefined ? { kind: 'ask' as const, reason: `${byEffects.reason}; ${policy}` } : byEffects ?? byPolicy
  if (decision.kind === 'ask') {
    const approval = env.approval()
    if (!approval) return failure('DENIED', noApprover(call.toolName, decision.reason, byEffects !== undefined, policy))
    let answer: 'allow' | 'deny' | typeof STOPPED
    try {
      // Raced with the signal too: an approval service that ignores it must not hold a cancelled call.
      answer = await untilStopped(approval.request({ callId: call.callId, toolName: call.toolName, args: call.args, effects: call.tool.effects, reason: decision.reason, ...(policy === undefined ? {} : { policy }), signal }), signal)
    } catch (error) {
      env.logger.error('approval request for %s failed: %s', call.toolName, error)
      answer = 'deny'
    }
    if (signal.aborted) return cancelledBefore(call.toolName)
    if (answer !== 'allow') return failure('DENIED', `${call.toolName} was not approved (${decision.reason})`)
  }
  const guarded = await runGuards(hooks.guards, call, signal)
  if (guarded === STOPPED) return cancelledBefore(call.toolName)
  if (guarded !== undefined) return failure('DENIED', `${call.toolName} was denied: ${guarded}`)
  return undefined
}

/**
 * Why a call that had to ask was denied without an approval service, and how to run it: what to
 * change depends on who asked — askFor (the effects), a policy (a plugin's own setting), or both.
 */
function noApprover(name: string, reason: string, byEffects: boolean, policy: string | undefined): string {
  const needs = `${name} needs approval (${reason})`
  if (policy === undefined) return `${needs} and no approval service is installed: load one, or remove the effect from askFor on the @rein/tools row to run such calls without asking`
  if (!byEffects) return `${needs}: a policy for this tool asked (askFor did not), and no approval service is installed: load one, or change the setting of the plugin whose policy asks to run such calls without asking`
  return `${needs} and no approval service is installed: load one; to run such calls without asking, remove the effect from askFor on the @rein/tools row and change the setting of the plugin whose policy asks (${policy})`
}

function cancelledBefore(name: string): ToolResult {
  return failure('ABORTED_BEFORE_DISPATCH', `${name} was cancelled before it started`)
}

function thrown(name: string, error: unknown): ToolResult {
  const own = reinErrorParts(error)
  // A tool's own error may quote what its library said, key included, as any thrown text may.
  if (own) return failure(own.code, masked(own.message))
  const words = thrownWords(error)
  if (words === undefined) return failure('TOOL_FAILED', `${name} failed without saying why (it threw ${thrownKind(error)})`)
  return failure('TOOL_FAILED', 'message' in words ? words.message : `${name} failed: it threw ${words.rendering}`)
}

/** A hook's or render's failure in words: its message, else what it threw. */
function said(thrown: unknown): string {
  return thrownText(thrown) ?? `it threw ${thrownKind(thrown)}`
}

/**
 * Validates, freezes and renders a value the body produced, or a post-execute hook gave in its
 * place: then `hook` names that hook, and every refusal blames it rather than the body.
 */
export function settle(prepared: PreparedTool, name: string, args: FrozenJson<JsonObject>, raw: unknown, logger: Logger, hook?: string): ToolResult {
  const definition = prepared.definition
  // Said apart from other non-JSON: a body that forgot to return reads it as its own mistake.
  if (raw === undefined) return failure('INVALID_TOOL_OUTPUT', blamer(name, hook).invalid('nothing (undefined)', '; a tool must return a value matching its output schema'))
  let value: FrozenJson
  try {
    value = toFrozenJson(raw as JsonValue)
  } catch (error) {
    const blame = blamer(name, hook)
    return failure('INVALID_TOOL_OUTPUT', blame.invalid(`${blame.a} that is not JSON: ${said(error)}`))
  }
  const issues = validateJson(prepared.output, value)
  if (issues.length > 0) {
    const detail = issues.slice(0, 10).map((issue) => `${issue.path}: ${issue.message}`).join('; ')
    const blame = blamer(name, hook)
    return failure('INVALID_TOOL_OUTPUT', blame.invalid(`${blame.a} that does not match ${blame.its} output schema: ${detail}`))
  }
  let content: ToolContent
  try {
    content = toContent(definition.output.render(args, value), 'output.render returned')
  } catch (error) {
    return failure('TOOL_FAILED', blamer(name, hook).unrendered(said(error)))
  }
  const meta = presentationMeta(definition, args, value, logger)
  // Frozen, like failures: a result observer must not change what the caller gets.
  return Object.freeze(meta === undefined ? { isError: false, value, content } : { isError: false, value, content, meta })
}

/** `settle`'s refusals in words that blame whoever gave the value: the body, or the named hook (with what it should do); made only for a refusal. */
function blamer(name: string, hook: string | undefined) {
  if (hook === undefined) {
    return {
      a: 'a value',
      its: 'its',
      invalid: (problem: string, fix = '') => `${name} returned ${problem}${fix}`,
      unrendered: (why: string) => `${name} could not render its result: ${why}`,
    }
  }
  const keep = 'or return nothing to keep the result'
  return {
    a: 'one',
    its: `${name}'s`,
    invalid: (problem: string) => `${name}: ${hook} replaced the value with ${problem}; give a value matching ${name}'s output schema, ${keep}`,
    unrendered: (why: string) => `${name}: ${hook} replaced the value with one ${name} could not render (${why}); give a value ${name}'s output.render accepts, ${keep}`,
  }
}

/** `output.presentationMeta`, made JSON; any failure is logged and costs only the meta, never the result. */
function presentationMeta(definition: PreparedTool['definition'], args: FrozenJson<JsonObject>, value: FrozenJson, logger: Logger): FrozenJson | undefined {
  if (!definition.output.presentationMeta) return undefined
  try {
    const meta: unknown = definition.output.presentationMeta(args, value)
    if (isThenable(meta)) {
      meta.then(undefined, () => {})
      throw new TypeError('it returned a promise; presentationMeta must be synchronous')
    }
    return meta === undefined ? undefined : toFrozenJson(meta as JsonValue)
  } catch (error) {
    logger.error('presentationMeta failed, result kept without it: %s', error)
    return undefined
  }
}

/** A post-execute hook in a message: its function's name when it has one, and the row or plugin that registered it. */
function hookLabel(hook: PostHook): string {
  const { label } = ownerOf(hook.owner)
  const name: unknown = hook.review.name
  return typeof name === 'string' && name !== '' ? `the post-execute hook ${JSON.stringify(name)} of ${label}` : `a post-execute hook of ${label}`
}

async function review(
  hook: PostHook, prepared: PreparedTool, call: ToolCall, args: FrozenJson<JsonObject>, result: ToolSuccess, logger: Logger,
): Promise<ToolResult> {
  const tool = call.toolName
  let decision
  try {
    decision = await hook.review(call, Object.freeze({ value: result.value, content: result.content }))
  } catch (error) {
    return failure('BLOCKED', `${tool}: ${hookLabel(hook)} failed: ${said(error)}`)
  }
  if (!decision || decision.kind === 'accept') return result
  switch (decision.kind) {
    case 'replace-content':
      try {
        return Object.freeze({ ...result, content: toContent(decision.content, 'its replace-content is') })
      } catch (error) {
        return failure('BLOCKED', `${tool}: ${hookLabel(hook)} gave invalid content: ${said(error)}`)
      }
    case 'replace-value':
      return settle(prepared, tool, args, decision.value, logger, hookLabel(hook))
    case 'append':
      if (typeof decision.text !== 'string') return failure('BLOCKED', `${tool}: ${hookLabel(hook)} appended something other than text`)
      return Object.freeze({ ...result, content: Object.freeze([...result.content, Object.freeze({ type: 'text' as const, text: decision.text })]) })
    case 'block':
      return failure('BLOCKED', typeof decision.feedback === 'string' && decision.feedback !== '' ? decision.feedback : `${tool}: ${hookLabel(hook)} blocked the result without saying why`)
    default:
      return failure('BLOCKED', `${tool}: ${hookLabel(hook)} returned an unknown decision`)
  }
}
