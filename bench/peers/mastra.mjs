// @ts-check
/**
 * Mastra (`@mastra/core` 1.71.0): an `Agent` with one `createTool` tool (zod 4 input schema), run
 * with `agent.stream(messages, { maxSteps })` and its `fullStream` consumed to completion; Mastra's
 * loop calls the model, runs the tool and calls the model again.
 *
 * - Model: Mastra's model router with an OpenAI-compatible config `{ providerId, modelId, url,
 *   apiKey }`; with a `url` the router builds its bundled AI SDK openai-compatible chat model
 *   directly (no gateway / models.dev lookup).
 * - Streaming on. The agent stands alone (no `Mastra` instance), so no storage, memory or
 *   observability/telemetry exporter is configured: nothing is persisted or exported.
 * - Scenario B: history is the message list, passed back in by hand: each turn sends the previous
 *   messages plus the new user message, then appends `(await stream.response).messages` (the
 *   assistant tool-call, tool-result and answer messages). Mastra memory is not used: it needs
 *   `@mastra/memory` plus a storage adapter, neither installed.
 */

import { Agent } from '@mastra/core/agent'
import { createTool } from '@mastra/core/tools'
import { z } from 'zod'
import { API_KEY, MODEL, SYSTEM, TOOL_DESCRIPTION, TOOL_NAME, args, lookup, runLoop } from '../loop/common.mjs'

const { baseURL, scenario, turns } = args()

const lookupTool = createTool({
  id: TOOL_NAME,
  description: TOOL_DESCRIPTION,
  inputSchema: z.object({ key: z.string().describe('The key to look up.') }),
  execute: async ({ key }) => lookup(key),
})

const agent = new Agent({
  id: 'bench',
  name: 'bench',
  instructions: SYSTEM,
  model: { providerId: 'bench', modelId: MODEL, url: baseURL, apiKey: API_KEY },
  tools: { [TOOL_NAME]: lookupTool },
})

const conversation = async () => {
  /** @type {any[]} */
  const messages = []
  return {
    send: async (/** @type {string} */ text) => {
      messages.push({ role: 'user', content: text })
      const stream = await agent.stream(messages, { maxSteps: 5 })
      for await (const _chunk of stream.fullStream) {
        // consume the stream to completion, as an interactive client would
      }
      const answer = await stream.text
      messages.push(...((await stream.response).messages ?? []))
      return answer
    },
  }
}

await runLoop({ scenario, turns, conversation })
