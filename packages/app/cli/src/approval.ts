/**
 * Who answers a tool call that needs approval (by default one whose effects include `write` or
 * `exec`; the tools row's `askFor` says which). `--yes` allows every call, `--allow <effects>` the
 * calls whose asked-about effects it lists, unless a pre-execute policy asked too (user-scope
 * memory, say); `chat` asks the rest at the prompt, `run` and `resume`
 * deny them and tell the model how the user can allow them. A composition with its own approval
 * row decides everything itself.
 */

import type { Context } from '@deepseek-ai/cordis'
import { ReinError } from '@rein/base'
import { ASK_FOR_BY_DEFAULT, describeEffects, type ApprovalRequest, type ApprovalService, type ToolEffect } from '@rein/tools'

export interface ApprovalFlags {
  yes: boolean
  allow: readonly ToolEffect[]
}

/** A prompt's answer: `always` allows this call and every later call of the same tool. */
export type PromptAnswer = 'allow' | 'deny' | 'always'
export type Prompt = (request: ApprovalRequest) => Promise<PromptAnswer>

/** Where nobody is asked: tells the user, once per tool, how to allow what was denied. */
export type DenialNotice = (text: string) => void

/**
 * Installs the command's approval on the composition. Without `prompt` (run, resume) a call that
 * would be asked about is denied by a policy whose reason the model reads, and `notice` the user
 * reads: how to allow it.
 */
export function installApproval(ctx: Context, flags: ApprovalFlags, prompt?: Prompt, notice?: DenialNotice): void {
  if (ctx.get('approval') !== undefined) {
    if (flags.yes || flags.allow.length > 0) {
      throw new ReinError('USAGE', `the composition has its own approval row, which answers every approval; drop ${flags.yes ? '--yes' : '--allow'}, or that row`)
    }
    return
  }
  /** The effects of a call that approval is about: those the tools row asks for. */
  const asked = (effects: readonly ToolEffect[]) => {
    const askFor = ctx.tools.config.askFor ?? ASK_FOR_BY_DEFAULT
    return effects.filter((effect) => askFor.includes(effect))
  }
  /** Whether the flags allow a call asked about for `effects` (and, when a policy asked, its reason). */
  const covered = (effects: readonly ToolEffect[], policy?: string) => {
    const needs = asked(effects)
    // A policy's question is about more than effects: only --yes answers it, not --allow.
    return flags.yes || (policy === undefined && needs.length > 0 && needs.every((effect) => flags.allow.includes(effect)))
  }
  if (!prompt) denyWithAdvice(ctx, asked, covered, notice)
  const always = new Set<string>()
  const told = new Set<string>()
  const service: ApprovalService = {
    request: async (request) => {
      if (covered(request.effects, request.policy) || always.has(request.toolName)) return 'allow'
      if (!prompt) {
        if (request.policy !== undefined && notice && !told.has(request.toolName)) {
          told.add(request.toolName)
          notice(`${request.toolName} was denied: ${request.policy}; to allow it, rerun with --yes, use rein chat to be asked, or name it under tools on an approval row (@rein/tools/approval)`)
        }
        return 'deny'
      }
      const answer = await prompt(request)
      if (answer === 'always') always.add(request.toolName)
      return answer === 'deny' ? 'deny' : 'allow'
    },
  }
  ctx.provide('approval', service)
  installed.set(ctx, flags)
}

/** The compositions whose approval the command provides, with the flags it was given. */
const installed = new WeakMap<Context, ApprovalFlags>()

/** cordis's words for a row's `ctx.provide('approval')` when the service is provided already. */
const TAKEN = /failed to start: service "approval" has been registered[^\n]*/g

/**
 * A reload's refusal with an approval row that could not start because this chat provides approval
 * itself (no row did when it started) said in rein's terms: cordis keeps one provider per service,
 * and the chat's prompt cannot be taken back from under a running chat.
 */
export function approvalTakenByChat(ctx: Context, sessionId: string, message: string): string {
  const flags = installed.get(ctx)
  if (flags === undefined) return message
  const given = flags.yes ? '--yes' : flags.allow.length > 0 ? '--allow' : undefined
  const by = given === '--yes' ? '--yes' : given ? '--allow and its prompt' : 'its prompt'
  const without = given ? ` without ${given} (the row then answers every approval)` : ''
  return message.replace(TAKEN, `cannot be added while this chat runs: the chat answers approvals itself (${by}), and no row can take that over from a running chat; to use the row, leave this chat (Ctrl-D) and continue it with rein chat --session ${sessionId}${without}`)
}

/**
 * A denial's only words the model reads are a policy's reason (an approval service just says no),
 * so where nobody is asked, a policy denies first and names the flag that would allow the call.
 * The person is told once the call was denied for that: another policy may refuse it for good
 * (memory's refusal of a key), and rerunning with the flag would not help.
 */
function denyWithAdvice(ctx: Context, asked: (effects: readonly ToolEffect[]) => ToolEffect[], covered: (effects: readonly ToolEffect[]) => boolean, notice?: DenialNotice) {
  const told = new Set<string>()
  const advice = new Map<string, { toolName: string; text: string }>()
  ctx.tools.preExecute((call) => {
    const needs = asked(call.tool.effects)
    if (needs.length === 0 || covered(call.tool.effects)) return undefined
    const how = `--allow ${needs.join(',')} (or --yes), or an approval row (@rein/tools/approval) in cordis.yml`
    if (notice && !told.has(call.toolName)) advice.set(call.callId, { toolName: call.toolName, text: `${call.toolName} was denied: ${describeEffects(needs)}; to allow it, rerun with ${how}` })
    return { kind: 'deny', reason: `${describeEffects(needs)}, which needs approval, and this run asks nobody: the user can allow it with ${how}` }
  })
  if (!notice) return
  ctx.tools.onResult((request, result) => {
    const pending = advice.get(request.callId)
    if (pending === undefined) return
    advice.delete(request.callId)
    if (!result.isError || result.error.code !== 'DENIED' || told.has(pending.toolName)) return
    told.add(pending.toolName)
    notice(pending.text)
  })
}
