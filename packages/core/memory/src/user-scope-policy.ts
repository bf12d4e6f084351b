/**
 * The memory tools' pre-execute policy. First it refuses, before anyone is asked, what the tool
 * would refuse anyway: a question whose yes can only fail wastes the person's answer (and under
 * `rein run` tells them to rerun for nothing), and one about a secret would quote the key. A store
 * failure while it looks the entry up reads to the model as the tool's own would (no file path,
 * no advice meant for people; the store's code).
 *
 * Then it asks before a call changes user-scope memory. Every project's sessions read those
 * entries, so a note planted by text the agent read in one workspace (a hostile README, say)
 * would follow the person everywhere: allowing `write` for this workspace (`--allow write`) must
 * not be enough. The registry passes the reason as the request's `policy`, which approvers that
 * allow by effect do not answer. The reason shows what changes, so the person answers about the
 * text, not about a tool name.
 */

import type { Logger } from '@deepseek-ai/cordis'
import { codePointCount, counted, isReinError } from '@rein/base'
import type { PreExecuteDecision, ToolCall } from '@rein/tools'
import { headOf, oneLine } from './format.ts'
import { forModel } from './model-errors.ts'
import type { MemoryCallCheck } from './tools.ts'
import type { MemoryEntry } from './types.ts'

/**
 * Most characters of one content the reason quotes: more than the default `maxContentChars`, so a
 * person sees all of what they allow (a line planted after the first few hundred characters would
 * otherwise be saved unseen); past it, the question says how much it leaves out.
 */
const QUOTED_CHARS = 4_000

/**
 * Refuses (with the tool's code and words) a memory call that `check` refuses; then, when
 * `askUserScope`, asks for `memory_write` to the user scope and `memory_update` / `memory_forget`
 * of a user entry. `off` says whether a store failure turned memory off (see `forModel`).
 */
export function memoryPolicy(check: MemoryCallCheck, askUserScope: boolean, logger: Logger, off: () => boolean): (call: ToolCall) => Promise<PreExecuteDecision | undefined> {
  return async (call) => {
    let checked: Awaited<ReturnType<MemoryCallCheck>>
    try {
      checked = await check(call)
    } catch (error) {
      const refusal = forModel(`${call.toolName} (looking up what it changes, before it ran)`, error, logger, off) ?? (isReinError(error) ? error : undefined)
      if (refusal === undefined) throw error
      return { kind: 'deny', reason: refusal.message, code: refusal.code }
    }
    if (checked === undefined || !askUserScope) return undefined
    const reason = reasonFor(call, checked.entry)
    return reason === undefined ? undefined : { kind: 'ask', reason: oneLine(reason) }
  }
}

/**
 * What the call would change in user memory, as the person reads it, or `undefined` when it
 * changes none. `entry` is the one it changes (updates, forgets or corrects), checked reachable;
 * a correction is of the same scope.
 */
function reasonFor({ toolName, args }: ToolCall, entry: MemoryEntry | undefined): string | undefined {
  if (toolName === 'memory_write') {
    if (args.scope !== 'user') return undefined
    const retires = entry === undefined ? '' : `, and retires ${entry.id}: ${quote(entry.content)}`
    return `it saves to user memory, which every project's sessions read: ${quote(args.content)}${retires}`
  }
  if (entry?.scope !== 'user') return undefined
  if (toolName === 'memory_forget') return `it deletes user memory ${entry.id}: ${quote(entry.content)}`
  const content = typeof args.content === 'string' ? quote(args.content) : 'the same content'
  const type = typeof args.type === 'string' && args.type !== entry.type ? `, and its type ${entry.type} → ${args.type}` : ''
  return `it rewrites user memory ${entry.id}: ${quote(entry.content)} → ${content}${type}`
}

function quote(text: unknown): string {
  const line = oneLine(typeof text === 'string' ? text : '')
  const cut = codePointCount(line) - QUOTED_CHARS
  return cut <= 0 ? `"${line}"` : `"${headOf(line, QUOTED_CHARS)}… (${counted(cut, 'more character')} not shown)"`
}
