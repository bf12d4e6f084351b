// @ts-check
/**
 * LangGraph JS (`@langchain/langgraph` 1.7.3, `@langchain/openai` 1.5.8, `@langchain/core` 1.4.0):
 * the prebuilt `createReactAgent` (agent node ⇄ tools node) with one `tool()` from
 * `@langchain/core/tools` (zod 4 schema), run with `agent.stream(..., { streamMode: ['messages',
 * 'values'] })` and the stream consumed to completion: token chunks as they arrive ('messages') and
 * the graph state after each step ('values'; the last one carries the answer).
 *
 * - `createReactAgent` is marked deprecated in this version in favour of `createAgent` from the
 *   `langchain` package, which is not installed; the prebuilt is the nearest thing here.
 * - Model: `ChatOpenAI({ streaming: true, configuration: { baseURL } })`, Chat Completions.
 * - Streaming on. LangSmith tracing is off by default (only on with LANGSMITH_TRACING / LANGCHAIN_
 *   TRACING_V2 set); nothing is exported.
 * - Scenario B: LangGraph's documented conversation memory, a `MemorySaver` checkpointer with one
 *   `thread_id` per conversation; each turn sends only the new user message and the graph restores
 *   the history from the checkpoint. The checkpointer is in-memory and writes a checkpoint per graph
 *   step. A and C (a fresh conversation per turn) compile the agent without a checkpointer, as a
 *   one-shot use would.
 */

import { HumanMessage } from '@langchain/core/messages'
import { tool } from '@langchain/core/tools'
import { MemorySaver } from '@langchain/langgraph'
import { createReactAgent } from '@langchain/langgraph/prebuilt'
import { ChatOpenAI } from '@langchain/openai'
import { z } from 'zod'
import { API_KEY, MODEL, SYSTEM, TOOL_DESCRIPTION, TOOL_NAME, args, lookup, runLoop } from '../loop/common.mjs'

const { baseURL, scenario, turns } = args()

const lookupTool = tool(async ({ key }) => lookup(key), {
  name: TOOL_NAME,
  description: TOOL_DESCRIPTION,
  schema: z.object({ key: z.string().describe('The key to look up.') }),
})

const llm = new ChatOpenAI({ model: MODEL, apiKey: API_KEY, streaming: true, configuration: { baseURL } })

const agent = createReactAgent({
  llm,
  tools: [lookupTool],
  prompt: SYSTEM,
  checkpointer: scenario === 'B' ? new MemorySaver() : undefined,
})

let threads = 0

const conversation = async () => {
  const config = { configurable: { thread_id: `thread-${threads++}` } }
  return {
    send: async (/** @type {string} */ text) => {
      const stream = await agent.stream({ messages: [new HumanMessage(text)] }, { ...config, streamMode: ['messages', 'values'] })
      /** @type {any} */
      let state
      for await (const [mode, chunk] of stream) {
        if (mode === 'values') state = chunk
      }
      return String(state.messages.at(-1).content)
    },
  }
}

await runLoop({ scenario, turns, conversation })
