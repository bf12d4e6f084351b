// @ts-check
/**
 * rein in the loop benchmark, composed in code from its built packages (run `pnpm build` first):
 * @rein/llm + @rein/llm-openai against the base URL, @rein/tools with `lookup`, @rein/session and
 * @rein/agent. The fourth argument picks the variant:
 *
 * - `durable`: sessions in @rein/session-jsonl (each event fsynced before the request, and written
 *   before the replay-safe lookup's body, in a fresh temporary folder), @rein/telemetry with @rein/otel-http exporting spans and
 *   metrics to `REIN_BENCH_OTLP` (the runner's local capture);
 * - `memory`: sessions in memory, no telemetry.
 *
 * A fresh conversation is a new agent with a new session (a new file for `durable`), closed after
 * its turn; B keeps one agent.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import AgentService from '@rein/agent'
import LlmRuntime from '@rein/llm'
import * as openai from '@rein/llm-openai'
import SessionService, { MemorySessionStore } from '@rein/session'
import ToolRegistry, { defineTool } from '@rein/tools'
import { API_KEY, MODEL, SYSTEM, TOOL_DESCRIPTION, TOOL_NAME, args, lookup, runLoop } from './common.mjs'

const { baseURL, scenario, turns } = args()
const variant = process.argv[5] ?? 'durable'
const VARIANTS = ['durable', 'memory', 'jsonl', 'telemetry']
if (!VARIANTS.includes(variant)) throw new Error(`unknown variant ${variant}: ${VARIANTS.join(', ')}`)

process.env.REIN_BENCH_KEY = API_KEY
const ctx = new Context()
await ctx.plugin(LlmRuntime, {})
await ctx.plugin(openai, { provider: 'mock', baseURL, apiKeyEnv: 'REIN_BENCH_KEY', models: [{ id: MODEL }] })
await ctx.plugin(ToolRegistry, {})
await ctx.plugin(SessionService, {})
await ctx.plugin(AgentService, { provider: 'mock', model: MODEL, system: SYSTEM })
// Under the runner, the sessions stay until every run is done (it removes REIN_BENCH_TMP): where
// ext4 runs without a journal, each inode allocation scans the inodes freed in the last minutes, so
// one run's clean-up would slow the next run's session files.
const kept = process.env.REIN_BENCH_TMP
const root = mkdtempSync(join(kept ?? tmpdir(), 'rein-bench-'))
if (!kept) process.on('exit', () => rmSync(root, { recursive: true, force: true }))
const jsonl = variant === 'durable' || variant === 'jsonl'
const telemetry = variant === 'durable' || variant === 'telemetry'
// Only what the variant composes is imported, as a cordis.yml loads only the rows it lists.
if (jsonl) {
  const { JsonlSessionStore } = await import('@rein/session-jsonl')
  ctx.sessions.registerStore(new JsonlSessionStore({ root }))
} else {
  ctx.sessions.registerStore(new MemorySessionStore())
}
if (telemetry) {
  const { default: TelemetryService } = await import('@rein/telemetry')
  const otelHttp = await import('@rein/otel-http')
  await ctx.plugin(TelemetryService, {})
  const endpoint = process.env.REIN_BENCH_OTLP
  if (!endpoint) throw new Error('REIN_BENCH_OTLP must name the OTLP capture endpoint')
  await ctx.plugin(otelHttp, { endpoint })
}
ctx.tools.register(defineTool({
  name: TOOL_NAME,
  description: TOOL_DESCRIPTION,
  parameters: { key: { type: 'string', required: true, description: 'The key to look up.' } },
  output: { schema: { type: 'string' }, render: (_input, value) => value },
  execute: (input) => lookup(input.key),
  // A pure lookup, declared so: it needs no approval, may run again after a crash (so its intent is
  // written, not fsynced, before the body), and C's three calls run side by side as every peer runs them.
  effects: [],
  isConcurrencySafe: true,
}))

/** @type {import('@rein/agent').Agent[]} */
const open = []
const conversation = async () => {
  // A fresh conversation closes the one before it, as a user would.
  for (const agent of open.splice(0)) await agent.close()
  const agent = await ctx.agents.create({ cwd: root })
  open.push(agent)
  return {
    send: async (/** @type {string} */ text) => {
      const result = await agent.send(text)
      if (result.reason !== 'completed') throw new Error(`the turn ended ${result.reason}: ${result.error?.code} ${result.error?.message}`)
      return result.text
    },
  }
}

await runLoop({
  scenario,
  turns,
  conversation,
  close: async () => {
    for (const agent of open.splice(0)) await agent.close()
    // The export of what the turns made is part of their cost.
    if (telemetry) await ctx.telemetry.flush()
  },
})
// Nothing is measured past this point; otel-http's export timer would keep the process alive.
process.exit(0)
