// @ts-check
/**
 * Vercel AI SDK (`ai` 7 + `@ai-sdk/openai-compatible` 3): `streamText` with the tool declared by the
 * `tool()` helper and a zod 4 schema, and the documented multi-step stop condition
 * (`stopWhen: isStepCount(5)`) so the SDK runs the tool loop itself (model → tool calls → SDK executes
 * `execute` → model). The answer is read from `textStream` the way an interactive caller prints it;
 * history is an array of `ModelMessage`s with `await result.responseMessages` appended after every
 * turn (the documented way to keep a conversation); a fresh conversation is a fresh array.
 *
 * On: streaming, `includeUsage` (as in the provider's docs; same request as the floor), the SDK's
 * defaults (2 retries, zod validation of the tool input). Off: telemetry is off by default (no
 * integration registered, nothing exported); nothing is persisted.
 */

import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { isStepCount, streamText, tool } from 'ai'
import { z } from 'zod'
import { API_KEY, MODEL, SYSTEM, TOOL_DESCRIPTION, TOOL_NAME, args, lookup, runLoop } from '../loop/common.mjs'

const { baseURL, scenario, turns } = args()
const provider = createOpenAICompatible({ name: 'bench', apiKey: API_KEY, baseURL, includeUsage: true })
const model = provider.chatModel(MODEL)
const tools = {
  [TOOL_NAME]: tool({
    description: TOOL_DESCRIPTION,
    inputSchema: z.object({ key: z.string().describe('The key to look up.') }),
    execute: async ({ key }) => lookup(key),
  }),
}

const conversation = async () => {
  /** @type {import('ai').ModelMessage[]} */
  const messages = []
  return {
    send: async (/** @type {string} */ text) => {
      messages.push({ role: 'user', content: text })
      const result = streamText({ model, instructions: SYSTEM, messages, tools, stopWhen: isStepCount(5) })
      let answer = ''
      for await (const delta of result.textStream) answer += delta
      messages.push(...(await result.responseMessages))
      return answer
    },
  }
}

await runLoop({ scenario, turns, conversation })
