/** One call through the whole pipeline. Every failure becomes a result; this never rejects. */

import { isReinError, toFrozenJson, type FrozenJson, type JsonValue } from '@rein/base'
import type { Logger } from '@deepseek-ai/cordis'
import { parseArguments, type ArgumentLimits } from './arguments.ts'
import { dispatch } from './dispatch.ts'
import type { ToolRun } from './define-tool.ts'
import type { ApprovalService, ExecuteWrapper, PostExecuteHook, PreExecutePolicy, ToolCall, ToolGuard } from './hooks.ts'
import { validateJson } from './json-schema.ts'
import type { PreparedTool } from './registration.ts'
import { combineDecisions, runGuards } from './policy.ts'
import { failure, toContent, type ToolContent, type ToolResult, type ToolSuccess } from './result.ts'

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

  const definition = prepared.definition
  const call: ToolCall = {
    callId: input.callId,
    toolName: name,
    args: parsed.args,
    cwd: input.context?.cwd ?? env.cwd,
    tool: prepared.definition,
    ...(input.context?.sessionId === undefined ? {} : { sessionId: input.context.sessionId }),
  }

  const denial = await admit(call, hooks, env, signal)
  if (denial) return denial
  if (signal.aborted) return failure('ABORTED_BEFORE_DISPATCH', `${name} was cancelled before it started`)

  const run: ToolRun = {
    callId: call.callId,
    signal,
    cwd: call.cwd,
    logger: env.logger,
    ...(call.sessionId === undefined ? {} : { sessionId: call.sessionId }),
  }
  const outcome = await dispatch(call, hooks.wrappers, signal, (bodySignal) => definition.execute(call.args, { ...run, signal: bodySignal }))
  if (!outcome.ok) {
    if (signal.aborted) return failure('ABORTED', `${name} was cancelled while running; its effects may be partial`)
    return thrown(name, outcome.error)
  }
  let result = settle(prepared, call, outcome.value, env.logger)
  for (const hook of hooks.postHooks) {
    if (result.isError) break
    result = await review(hook, prepared, call, result, env.logger)
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
function settle(prepared: PreparedTool, call: ToolCall, raw: unknown, logger: Logger): ToolResult {
  const name = call.toolName
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
    content = toContent(definition.output.render(call.args, value))
  } catch (error) {
    return failure('TOOL_FAILED', `${name} could not render its result: ${(error as Error).message}`)
  }
  const success: ToolSuccess = { isError: false, value, content }
  if (definition.output.presentationMeta) {
    try {
      const meta = definition.output.presentationMeta(call.args, value)
      if (meta !== undefined) success.meta = toFrozenJson(meta)
    } catch (error) {
      // Presentation must never cost the model its result.
      logger.error('%s: presentationMeta failed, result kept without it: %s', name, error)
    }
  }
  return success
}

async function review(hook: PostExecuteHook, prepared: PreparedTool, call: ToolCall, result: ToolSuccess, logger: Logger): Promise<ToolResult> {
  let decision
  try {
    decision = await hook(call, { value: result.value, content: result.content })
  } catch (error) {
    return failure('BLOCKED', `${call.toolName}: a post-execute hook failed: ${(error as Error).message}`)
  }
  if (!decision || decision.kind === 'accept') return result
  switch (decision.kind) {
    case 'replace-content':
      try {
        return { ...result, content: toContent(decision.content) }
      } catch (error) {
        return failure('BLOCKED', `${call.toolName}: a post-execute hook gave invalid content: ${(error as Error).message}`)
      }
    case 'replace-value':
      return settle(prepared, call, decision.value, logger)
    case 'block':
      return failure('BLOCKED', decision.feedback)
    default:
      return failure('BLOCKED', `${call.toolName}: a post-execute hook returned an unknown decision`)
  }
}
