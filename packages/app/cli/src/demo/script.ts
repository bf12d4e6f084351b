/**
 * The scripted model the demo talks to over HTTP: it reads the README, fixes its typo with an
 * edit, has a subagent check the result with bash, and answers — deciding each step from what the
 * request already holds, like a model would. The subagent's requests are told apart by their task.
 */

import type { MockReply, RecordedRequest } from '@rein/testkit'

interface WireMessage { role: string; content?: string | null }

/** What the demo's agent asks its subagent to do. */
const SUBAGENT_TASK = 'Check with bash that README.md no longer says "teh", and quote the fixed line.'

export function demoReply(request: RecordedRequest): MockReply {
  const messages = ((request.body as { messages?: WireMessage[] } | undefined)?.messages ?? [])
  const results = messages.filter((message) => message.role === 'tool')
  const usage: Usage = (completion) => ({ prompt_tokens: 180 + 60 * results.length, completion_tokens: completion, prompt_tokens_details: { cached_tokens: results.length ? 160 : 0 } })
  const child = messages.some((message) => message.role === 'user' && message.content === SUBAGENT_TASK)
  return child ? subagentReply(results, usage) : agentReply(results, usage)
}

interface WireUsage { prompt_tokens: number; completion_tokens: number; prompt_tokens_details: { cached_tokens: number } }
type Usage = (completion: number) => WireUsage

function subagentReply(results: readonly WireMessage[], usage: Usage): MockReply {
  if (results.length === 0) {
    return { steps: [{ toolCall: { id: 'call_check', name: 'bash', arguments: '{"command":"grep -c teh README.md; grep -n \\"files\\" README.md","description":"Look for the typo"}' } }], usage: usage(20) }
  }
  const line = (results[0]?.content ?? '').split('\n').find((text) => text.includes('files')) ?? ''
  return { steps: [{ text: `The typo is gone. The line now reads: ${line.trim()}` }], usage: usage(22) }
}

function agentReply(results: readonly WireMessage[], usage: Usage): MockReply {
  switch (results.length) {
    case 0:
      return { steps: [{ text: 'Let me read the README first.' }, { toolCall: { id: 'call_read', name: 'read', arguments: ['{"path":', '"README.md"}'] } }], usage: usage(16) }
    case 1:
      return { steps: [{ toolCall: { id: 'call_edit', name: 'edit', arguments: '{"path":"README.md","old_string":"reports teh files","new_string":"reports the files"}' } }], usage: usage(24) }
    case 2:
      return { steps: [{ text: 'A subagent will check it.' }, { toolCall: { id: 'call_check', name: 'subagent', arguments: JSON.stringify({ description: 'check the fix', prompt: SUBAGENT_TASK }) } }], usage: usage(28) }
    default: {
      const report = (results.at(-1)?.content ?? '').split('\n')[0] ?? ''
      return { steps: [{ text: `Fixed the typo in README.md ("teh" → "the"). The subagent confirms: ${report.trim()}` }], usage: usage(30) }
    }
  }
}
