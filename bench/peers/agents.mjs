// @ts-check
/**
 * OpenAI Agents JS (`@openai/agents` 0.20.0): an `Agent` with one `tool()` (zod 4 parameters), run
 * with `run(agent, input, { stream: true })` and the stream consumed to completion; the SDK runs the
 * tool loop itself.
 *
 * - Model: Chat Completions, not the Responses API (the mock server speaks chat completions only):
 *   the default model provider is an `OpenAIProvider({ baseURL, apiKey, useResponses: false })`, so
 *   the SDK builds its own `openai` client (its own dependency, openai 7.x; the top-level `openai`
 *   of bench/peers is 6.x, for LangChain) and wraps it in `OpenAIChatCompletionsModel`.
 * - Streaming on. Tracing off: `setTracingDisabled(true)` (on by default; its exporter would POST
 *   traces to api.openai.com). No session/persistence: the SDK keeps none unless given a `Session`.
 * - Scenario B: the next turn's input is the previous run's `result.history` plus the new user
 *   message (the SDK's documented way to continue a conversation by hand).
 */

import { Agent, OpenAIProvider, run, setDefaultModelProvider, setTracingDisabled, tool, user } from '@openai/agents'
import { z } from 'zod'
import { API_KEY, MODEL, SYSTEM, TOOL_DESCRIPTION, TOOL_NAME, args, lookup, runLoop } from '../loop/common.mjs'

const { baseURL, scenario, turns } = args()

setTracingDisabled(true)
setDefaultModelProvider(new OpenAIProvider({ baseURL, apiKey: API_KEY, useResponses: false }))

const lookupTool = tool({
  name: TOOL_NAME,
  description: TOOL_DESCRIPTION,
  parameters: z.object({ key: z.string().describe('The key to look up.') }),
  execute: async ({ key }) => lookup(key),
})

const agent = new Agent({ name: 'bench', instructions: SYSTEM, model: MODEL, tools: [lookupTool] })

const conversation = async () => {
  /** @type {import('@openai/agents').AgentInputItem[]} */
  let history = []
  return {
    send: async (/** @type {string} */ text) => {
      const result = await run(agent, [...history, user(text)], { stream: true })
      for await (const _event of result) {
        // consume the stream to completion, as an interactive client would
      }
      await result.completed
      history = result.history
      return String(result.finalOutput ?? '')
    },
  }
}

await runLoop({ scenario, turns, conversation })
