/**
 * The scripted model the demo talks to over HTTP: it lists the files, reads the README, and
 * answers — deciding each step from what the request already holds, like a model would.
 */

import type { MockReply, RecordedRequest } from '@rein/testkit'

interface WireMessage { role: string; content?: string | null }

export function demoReply(request: RecordedRequest): MockReply {
  const messages = ((request.body as { messages?: WireMessage[] } | undefined)?.messages ?? [])
  const results = messages.filter((message) => message.role === 'tool')
  const usage = (completion: number) => ({ prompt_tokens: 180 + 40 * results.length, completion_tokens: completion, prompt_tokens_details: { cached_tokens: results.length ? 160 : 0 } })
  if (results.length === 0) {
    return { steps: [{ text: 'Let me look at the workspace first.' }, { toolCall: { id: 'call_list', name: 'list_files', arguments: '{}' } }], usage: usage(18) }
  }
  if (results.length === 1) {
    return { steps: [{ toolCall: { id: 'call_readme', name: 'read_file', arguments: ['{"path":', '"README.md"}'] } }], usage: usage(12) }
  }
  const readme = results[1]?.content ?? ''
  const firstLine = readme.split('\n').find((line) => line.trim() && !line.startsWith('#')) ?? ''
  return {
    steps: [
      { text: 'This workspace holds **Lighthouse** (package.json says version 0.3.0). ' },
      { text: `Its README says: "${firstLine.trim()}" ` },
      { text: 'The scanning logic lives in src/scan.ts.' },
    ],
    usage: usage(46),
  }
}
