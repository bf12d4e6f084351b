/**
 * `@rein/tools/approval`: an approval row for cordis.yml. It answers every call that needs approval
 * (see `askFor`) from its Config alone — allowed effects, allowed tool names — and denies the rest,
 * for unattended runs that should still write or run commands without `--yes`.
 */

import type { Context } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { TOOL_EFFECTS, type ToolEffect } from './effects.ts'
import type { ApprovalService } from './hooks.ts'

/** Which calls the row allows. */
export interface ApprovalRowConfig {
  /** A call is allowed when every effect it needs approval for is listed here (and no pre-execute policy asked about it). */
  allow: ToolEffect[]
  /** Tools allowed whatever their effects or policies, by exact name. */
  tools: string[]
}

export const Config: Schema<Partial<ApprovalRowConfig>, ApprovalRowConfig> = Schema.object({
  allow: Schema.array(Schema.union(TOOL_EFFECTS.map((effect) => Schema.const(effect)))).default([]).description('Effects allowed without asking, e.g. [write, exec].'),
  tools: Schema.array(Schema.string()).default([]).description('Tools allowed whatever their effects, by name.'),
}) as Schema<Partial<ApprovalRowConfig>, ApprovalRowConfig>

export const name = 'rein-approval'

/** Provides `ctx.approval` while the row is loaded. */
export function apply(ctx: Context, config: ApprovalRowConfig): void {
  const service: ApprovalService = {
    request: (request) => {
      if (config.tools.includes(request.toolName)) return 'allow'
      // A policy asked about more than effects: only naming the tool allows it.
      if (request.policy !== undefined) return 'deny'
      const askFor = ctx.get('tools')?.config.askFor ?? []
      const needs = request.effects.filter((effect) => askFor.includes(effect))
      return needs.length > 0 && needs.every((effect) => config.allow.includes(effect)) ? 'allow' : 'deny'
    },
  }
  ctx.provide('approval', service)
}
