/**
 * The scripted model the demo talks to over HTTP: it reads the README, fixes its typo with an
 * edit, checks the result with bash, and answers — deciding each step from what the request
 * already holds, like a model would.
 */

import type { MockReply, RecordedRequest } from '@rein/testkit'

interface WireMessage { role: string; content?: string | null }

export function demoReply(request: RecordedRequest): MockReply {
  const messages = ((request.body as { messages?: WireMessage[] } | undefined)?.messages ?? [])
  const results = messages.filter((message) => message.role === 'tool')
  const usage = (completion: number) => ({ prompt_tokens: 180 + 60 * results.length, completion_tokens: completion, prompt_tokens_details: { cached_tokens: results.length ? 160 : 0 } })
  switch (results.length) {
    case 0:
      return { steps: [{ text: 'Let me read the README first.' }, { toolCall: { id: 'call_read', name: 'read', arguments: ['{"path":', '"README.md"}'] } }], usage: usage(16) }
    case 1:
      return { steps: [{ toolCall: { id: 'call_edit', name: 'edit', arguments: '{"path":"README.md","old_string":"reports teh files","new_string":"reports the files"}' } }], usage: usage(24) }
    case 2:
      return { steps: [{ toolCall: { id: 'call_bash', name: 'bash', arguments: '{"command":"grep -n \\"files\\" README.md && wc -l README.md","description":"Check the fixed line"}' } }], usage: usage(20) }
    default: {
      const check = results.at(-1)?.content ?? ''
      const line = check.split('\n').find((text) => text.includes('files')) ?? ''
      return { steps: [{ text: `Fixed the typo in README.md ("teh" → "the"). bash confirms: ${line.trim()}` }], usage: usage(30) }
    }
  }
}
