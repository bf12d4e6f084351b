/** One call through the whole pipeline. Every failure becomes a result; this never rejects. */

import { isReinError, toFrozenJson, type FrozenJson, type JsonObject, type JsonValue } from '@rein/base'
import type { Logger } from '@deepseek-ai/cordis'
import { parseArguments, type ArgumentLimits } from './arguments.ts'
import { dispatch } from './dispatch.ts'
import type { ToolRun } from './define-tool.ts'
import type { ApprovalService, ExecuteWrapper, PostExecuteHook, PreExecutePolicy, ToolCall, ToolGuard } from './hooks.ts'
import { validateJson } from './json-schema.ts'
import type { PreparedTool } from './registration.ts'
import { combineDecisions, runGuards } from './policy.ts'
import { failure, toContent, type ToolContent, type ToolResult, type ToolSuccess } from './result.ts'
import { isThenable } from './thenable.ts'

export interface ExecuteInput {
  callId: string
  name: string
  /** The raw JSON string the model produced. */
  arguments: string
  signal: AbortSignal
  context?: { sessionId?: string; cwd?: string }
}

export interface PipelineHooks {
  policies: readonly PreExecutePolicy[]
  guards: readonly ToolGuard[]
  wrappers: readonly ExecuteWrapper[]
  postHooks: readonly PostExecuteHook[]
}

export interface PipelineEnv {
  limits: ArgumentLimits
  /** The deadline for tools that declare no `timeoutMs`. */
  defaultTimeoutMs: number
  cwd: string
  logger: Logger
  approval: () => ApprovalService | undefined
  toolNames: () => string[]
}

export async function runPipeline(
  input: ExecuteInput,
  prepared: PreparedTool | undefined,
  hooks: PipelineHooks,
  env: PipelineEnv,
): Promise<ToolResult> {
  const { name, signal } = input
  if (!prepared) {
    const known = env.toolNames()
    return failure('UNKNOWN_TOOL', `unknown tool "${name}"; available tools: ${known.length ? known.join(', ') : 'none'}`)
  }
  if (signal.aborted) return failure('ABORTED_BEFORE_DISPATCH', `${name} was cancelled before it started`)

  const parsed = parseArguments(input.arguments, prepared.schema.parameters, env.limits)
  if (!parsed.ok) return failure('INVALID_ARGS', `invalid arguments for ${name}: ${parsed.problems.join('; ')}`)

  // Captured before any hook runs: the body and render get exactly these. Hooks get a frozen view
  // holding the same (deeply frozen) arguments and the tool's metadata, never its definition.
  const args = parsed.args
  const call: ToolCall = Object.freeze({
    callId: input.callId,
    toolName: name,
    args,
    cwd: input.context?.cwd ?? env.cwd,
    tool: prepared.info,
    ...(input.context?.sessionId === undefined ? {} : { sessionId: input.context.sessionId }),
  })

  const denial = await admit(call, hooks, env, signal)
  if (denial) return denial
  if (signal.aborted) return failure('ABORTED_BEFORE_DISPATCH', `${name} was cancelled before it started`)

  const { callId, cwd, sessionId } = call
  const logger = env.logger
  const definition = prepared.definition
  const timeoutMs = prepared.info.timeoutMs ?? env.defaultTimeoutMs
  const outcome = await dispatch(call, hooks.wrappers, signal, timeoutMs, (lazy) => {
    // A getter, so the signal is made only if the body reads it (see LazySignal). Two literals
    // rather than a spread: this runs on every call, and a spread beside a getter is slow.
    const run: ToolRun = sessionId === undefined
      ? { callId, get signal() { return lazy.signal }, cwd, logger }
      : { callId, get signal() { return lazy.signal }, cwd, logger, sessionId }
    return definition.execute(args, run)
  })
  if (!outcome.ok) {
    if (signal.aborted) return failure('ABORTED', `${name} was cancelled while running; its effects may be partial`)
    return thrown(name, outcome.error)
  }
  let result = settle(prepared, name, args, outcome.value, env.logger)
  for (const hook of hooks.postHooks) {
    if (result.isError) break
    result = await review(hook, prepared, call, args, result, env.logger)
  }
  return result
}

/** Pre-execute policies, approval, then guards. Returns a failure, or nothing to proceed. */
async function admit(call: ToolCall, hooks: PipelineHooks, env: PipelineEnv, signal: AbortSignal): Promise<ToolResult | undefined> {
  const decision = await combineDecisions(hooks.policies, call)
  if (decision.kind === 'deny') return failure('DENIED', `${call.toolName} was denied: ${decision.reason}`)
  if (decision.kind === 'ask') {
    const approval = env.approval()
    if (!approval) {
      return failure('DENIED', `${call.toolName} needs approval (${decision.reason}) and no approval service is installed`)
    }
    let answer: 'allow' | 'deny'
    try {
      answer = await approval.request({ callId: call.callId, toolName: call.toolName, args: call.args, reason: decision.reason, signal })
    } catch (error) {
      env.logger.error('approval request for %s failed: %s', call.toolName, error)
      answer = 'deny'
    }
    if (signal.aborted) return failure('ABORTED_BEFORE_DISPATCH', `${call.toolName} was cancelled before it started`)
    if (answer !== 'allow') return failure('DENIED', `${call.toolName} was not approved (${decision.reason})`)
  }
  const guarded = await runGuards(hooks.guards, call)
  if (guarded !== undefined) return failure('DENIED', `${call.toolName} was denied: ${guarded}`)
  return undefined
}

function thrown(name: string, error: unknown): ToolResult {
  if (isReinError(error)) return failure(error.code, error.message)
  const message = error instanceof Error ? error.message : String(error)
  return failure('TOOL_FAILED', message || `${name} failed without a message`)
}

/** Validates, freezes and renders a value the body (or a post-execute hook) produced. */
function settle(prepared: PreparedTool, name: string, args: FrozenJson<JsonObject>, raw: unknown, logger: Logger): ToolResult {
  const definition = prepared.definition
  let value: FrozenJson
  try {
    value = toFrozenJson(raw as JsonValue)
  } catch (error) {
    return failure('INVALID_TOOL_OUTPUT', `${name} returned a value that is not JSON: ${(error as Error).message}`)
  }
  const issues = validateJson(prepared.output, value)
  if (issues.length > 0) {
    const detail = issues.slice(0, 10).map((issue) => `${issue.path}: ${issue.message}`).join('; ')
    return failure('INVALID_TOOL_OUTPUT', `${name} returned a value that does not match its output schema: ${detail}`)
  }
  let content: ToolContent
  try {
    content = toContent(definition.output.render(args, value))
  } catch (error) {
    return failure('TOOL_FAILED', `${name} could not render its result: ${(error as Error).message}`)
  }
  const meta = presentationMeta(definition, args, value, logger)
  // Frozen, like failures: a result observer must not change what the caller gets.
  return Object.freeze(meta === undefined ? { isError: false, value, content } : { isError: false, value, content, meta })
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

async function review(
  hook: PostExecuteHook, prepared: PreparedTool, call: ToolCall, args: FrozenJson<JsonObject>, result: ToolSuccess, logger: Logger,
): Promise<ToolResult> {
  let decision
  try {
    decision = await hook(call, Object.freeze({ value: result.value, content: result.content }))
  } catch (error) {
    return failure('BLOCKED', `${call.toolName}: a post-execute hook failed: ${(error as Error).message}`)
  }
  if (!decision || decision.kind === 'accept') return result
  switch (decision.kind) {
    case 'replace-content':
      try {
        return Object.freeze({ ...result, content: toContent(decision.content) })
      } catch (error) {
        return failure('BLOCKED', `${call.toolName}: a post-execute hook gave invalid content: ${(error as Error).message}`)
      }
    case 'replace-value':
      return settle(prepared, call.toolName, args, decision.value, logger)
    case 'block':
      return failure('BLOCKED', decision.feedback)
    default:
      return failure('BLOCKED', `${call.toolName}: a post-execute hook returned an unknown decision`)
  }
}
