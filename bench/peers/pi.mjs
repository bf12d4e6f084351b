// @ts-check
/**
 * pi (`@earendil-works/pi-agent-core` + `@earendil-works/pi-ai` 0.74): the stateful `Agent` class with
 * a custom `openai-completions` model object whose `baseUrl` is the mock server, the tool an
 * `AgentTool` with a `typebox` schema (pi validates the arguments against it), `agent.prompt(text)`
 * per turn. The agent runs its own loop (model → tool calls → tools → model) and keeps the
 * transcript in `agent.state.messages`; a fresh conversation is a new `Agent`, scenario B reuses one.
 *
 * On: streaming (pi's openai-completions provider always streams, with `stream_options.include_usage`),
 * pi's defaults (parallel tool execution, no thinking, `store: false` in requests where compat
 * allows it). pi-ai talks through its own pinned copy of the `openai` SDK (6.26.0, not the 6.49.0
 * the openai harness uses) and builds a new client for every request: that is its default path.
 * Off: nothing to turn off (no telemetry, no persistence). The answer text is read from the last
 * assistant message of the transcript; a provider error recorded in `state.errorMessage` is rethrown.
 */

import { Agent } from '@earendil-works/pi-agent-core'
import { Type } from 'typebox'
import { API_KEY, MODEL, SYSTEM, TOOL_DESCRIPTION, TOOL_NAME, args, lookup, runLoop } from '../loop/common.mjs'

const { baseURL, scenario, turns } = args()

/** @type {import('@earendil-works/pi-ai').Model<'openai-completions'>} */
const model = {
  id: MODEL,
  name: 'Bench model',
  api: 'openai-completions',
  provider: 'bench',
  baseUrl: baseURL,
  reasoning: false,
  input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 16384,
}

const parameters = Type.Object({ key: Type.String({ description: 'The key to look up.' }) }, { additionalProperties: false })

/** @type {import('@earendil-works/pi-agent-core').AgentTool<typeof parameters>} */
const lookupTool = {
  name: TOOL_NAME,
  label: 'Lookup',
  description: TOOL_DESCRIPTION,
  parameters,
  execute: async (_id, params) => ({ content: [{ type: 'text', text: lookup(params.key) }], details: {} }),
}

const conversation = async () => {
  const agent = new Agent({
    initialState: { systemPrompt: SYSTEM, model, tools: [lookupTool] },
    getApiKey: () => API_KEY,
  })
  return {
    send: async (/** @type {string} */ text) => {
      await agent.prompt(text)
      if (agent.state.errorMessage) throw new Error(agent.state.errorMessage)
      const last = agent.state.messages.at(-1)
      if (last?.role !== 'assistant') throw new Error(`the turn ended on a ${last?.role} message`)
      return last.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
    },
  }
}

await runLoop({ scenario, turns, conversation })
