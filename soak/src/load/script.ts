/**
 * What the mock server answers, per conversation, computed from the request alone (so hundreds of
 * agents can share one server and each still gets its own answers): the last user message says
 * whose conversation it is (`LOADTOK-…`), which turn, how many tool steps and how many calls per step.
 */

import type { MockReply, RecordedRequest } from '@rein/testkit'

/** Every agent's token matches this; any other token in its log came from another conversation. */
export const TOKEN_PATTERN = /LOADTOK-[0-9a-z]+-[0-9a-f]{8}/g

/** A token for agent `index`: unique by the index, unpredictable by the seeded part. */
export function tokenFor(index: number, random: number): string {
  return `LOADTOK-${index.toString(36)}-${Math.floor(random * 2 ** 32).toString(16).padStart(8, '0')}`
}

/** The user message of one turn: `steps` requests answered with `calls` parallel `echo` calls each, then an answer. */
export function prompt(token: string, turn: number, steps: number, calls: number): string {
  return `${token} turn ${turn}: steps ${steps} calls ${calls}`
}

/** What `echo` answers: its arguments and the session it ran for, so a result names its owner. */
export function echoResult(token: string, turn: number, n: number, sessionId: string): string {
  return `echo ${token} turn ${turn} n ${n} session ${sessionId}`
}

/** The final answer of a turn: the token, the turn, and the results of the last step quoted. */
function answerText(token: string, turn: number, quoted: readonly string[]): string {
  return `done ${token} turn ${turn}${quoted.length > 0 ? `: ${quoted.join(' | ')}` : ''}`
}

interface WireMessage {
  role: string
  content?: string | null | { type: string; text?: string }[]
}

const PROMPT = /^(LOADTOK-[0-9a-z]+-[0-9a-f]{8}) turn (\d+): steps (\d+) calls (\d+)$/

function text(message: WireMessage): string {
  if (typeof message.content === 'string') return message.content
  if (Array.isArray(message.content)) return message.content.map((part) => part.text ?? '').join('')
  return ''
}

/**
 * The mock script: a summary request (compaction) gets a short summary; otherwise the conversation's
 * last user message decides: `steps` tool steps of `calls` parallel calls, then the answer.
 */
export function conversationScript(request: RecordedRequest, index: number): MockReply {
  // Input counted as the agent's meter counts it (4 characters a token): the meter trusts what the
  // provider reports, and the default small counts would keep compaction from ever starting.
  const usage = { prompt_tokens: Math.ceil(request.raw.length / 4), completion_tokens: 10 }
  const messages = (request.body as { messages?: WireMessage[] } | undefined)?.messages ?? []
  if (messages[0]?.role === 'system' && text(messages[0]).startsWith('You write the summary')) {
    return { usage, steps: [{ text: '## Goal\nEcho the calls.\n## Decisions\nNone.\n## Open tasks\nThe rest.\n## Notes\nNone.' }] }
  }
  const lastUser = messages.findLastIndex((message) => message.role === 'user' && PROMPT.test(text(message)))
  if (lastUser < 0) throw new Error('no load prompt in the request')
  const [, token, turnText, stepsText, callsText] = PROMPT.exec(text(messages[lastUser]!))!
  const turn = Number(turnText)
  const since = messages.slice(lastUser + 1)
  const done = since.filter((message) => message.role === 'assistant').length
  if (done < Number(stepsText)) {
    const calls = Number(callsText)
    return {
      usage,
      steps: Array.from({ length: calls }, (_, k) => ({
        toolCall: { id: `call_${index}_${k}`, name: 'echo', arguments: JSON.stringify({ token, turn, n: done * calls + k }) },
      })),
    }
  }
  const lastAssistant = since.findLastIndex((message) => message.role === 'assistant')
  const quoted = since.slice(lastAssistant + 1).filter((message) => message.role === 'tool').map(text)
  return { usage, steps: [{ text: answerText(token!, turn, quoted) }] }
}
