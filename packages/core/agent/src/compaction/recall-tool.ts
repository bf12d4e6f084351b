/**
 * `recall_result`: the model reads again, whole, a tool result a compaction pruned to a stub.
 * Offered only in a session that has been compacted, so other sessions' requests do not carry it.
 */

import { ReinError } from '@rein/base'
import { eventData, type Session } from '@rein/session'
import { defineTool } from '@rein/tools'

/** `session(id)`: the live session of a run (the agent that made the call). */
export function recallResultTool(session: (sessionId: string) => Session | undefined) {
  return defineTool({
    name: RECALL_TOOL,
    description: 'Shows again a tool result that was pruned from the conversation to save context. Its stub names the call id; use it only when you need that output again.',
    parameters: { call_id: { type: 'string', required: true, maxLength: 200, description: 'The call id the stub names.' } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    effects: ['read'],
    isConcurrencySafe: true,
    execute: (args, run) => {
      const events = (run.sessionId === undefined ? undefined : session(run.sessionId))?.events
      if (!events) throw new ReinError('NO_SESSION', 'recall_result reads the session of the agent that calls it; this call has none')
      const found = events.findLast((event) => event.type === 'tool/result' && eventData(event, 'tool/result').callId === args.call_id)
      if (!found) throw new ReinError('INVALID_ARGS', `no tool result with call id "${args.call_id}" in this session; the stub names it exactly`)
      const result = eventData(found, 'tool/result')
      const text = result.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n')
      return result.isError ? `(that call failed)\n${text}` : text
    },
    summarize: (args) => `recalled ${args.call_id}`,
    // Offered once a compaction pruned something in the run's session: no schema to pay for before.
    availableTo: (identity) => session(identity.sessionId)?.compacted === true,
  })
}

const RECALL_TOOL = 'recall_result'

/**
 * An allow-list that also lets `recall_result` through: the stubs of a compacted session name it,
 * and it reads only the caller's own session, so no agent's list (a subagent profile's) must name it.
 */
export function withRecall(visible: ((name: string) => boolean) | undefined): ((name: string) => boolean) | undefined {
  return visible && ((name) => name === RECALL_TOOL || visible(name))
}
