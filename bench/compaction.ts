/**
 * A 500-step session (50 turns of nine 4,000-character tool results and an answer) against a
 * model with a 32,000-token window: the tokens each request sends with compaction, against the
 * same session with no window at all and no compaction (what it would send; a real 32k model
 * refuses it part way), and the time compaction takes (a scripted summarizer that answers at once,
 * so the figure is rein's own work: measuring, choosing, the ledger, writing the event). Run: pnpm bench.
 */

import { Context } from '@deepseek-ai/cordis'
import AgentService from '@rein/agent'
import LlmRuntime, { type AdapterRequest } from '@rein/llm'
import SessionService, { MemorySessionStore } from '@rein/session'
import { createScriptedLlm, type ScriptedTurn } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'

const WINDOW = 32_000
const TURNS = 50
const CALLS_PER_TURN = 9

const sizeOf = (request: AdapterRequest) => Math.ceil([request.system ?? '', JSON.stringify(request.tools ?? []), ...request.messages.flatMap((message) => message.content.map((block) => JSON.stringify(block)))].join('').length / 4)

function provider(sizes: number[]) {
  return (request: AdapterRequest): ScriptedTurn => {
    const usage = { usage: { inputTokens: sizeOf(request), outputTokens: 20 } }
    if (request.system?.startsWith('You write the summary')) return [{ text: '## Goal\nRead every file.\n## Decisions\nOne at a time.\n## Open tasks\nThe rest.\n## Notes\nNone.' }, usage]
    sizes.push(usage.usage.inputTokens)
    const sinceUser = request.messages.length - request.messages.findLastIndex((message) => message.source.kind === 'user')
    if (Math.floor(sinceUser / 2) >= CALLS_PER_TURN) return [{ text: 'read them all' }, usage]
    return [{ toolCall: { id: `c${request.messages.length}`, name: 'read_big', arguments: JSON.stringify({ path: `src/f${request.messages.length}.txt` }) } }, usage]
  }
}

async function session(window: number | undefined, mode: 'auto' | 'off') {
  const sizes: number[] = []
  const ctx = new Context()
  await ctx.plugin(LlmRuntime, { retry: { maxRetries: 0 } })
  await ctx.plugin(ToolRegistry)
  await ctx.plugin(SessionService)
  await ctx.inject(['sessions'], (inner) => { inner.sessions.registerStore(new MemorySessionStore()) })
  await ctx.plugin(AgentService, { provider: 'scripted', model: 'm', maxSteps: 20, compaction: { mode } as never })
  ctx.llm.registerAdapter('scripted', createScriptedLlm(provider(sizes), { models: [{ id: 'm', ...(window ? { contextWindow: window } : {}) }] }))
  ctx.tools.register(defineTool({
    name: 'read_big', description: 'Reads a big file.', parameters: { path: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value }, effects: ['read'], isConcurrencySafe: true,
    execute: (args) => `${args.path}\n${'y'.repeat(4_000)}`,
  }))
  const agent = await ctx.agents.create()
  let compacting = 0
  let started = 0n
  const times: number[] = []
  agent.subscribe((event) => {
    if (event.type === 'context') started = process.hrtime.bigint()
    else if (event.type === 'compacted') {
      compacting++
      times.push(Number(process.hrtime.bigint() - started) / 1e6)
    }
  })
  const begun = process.hrtime.bigint()
  for (let turn = 1; turn <= TURNS; turn++) {
    const result = await agent.send(`read the next ${CALLS_PER_TURN} files (${turn})`)
    if (result.reason !== 'completed') throw new Error(`turn ${turn} ended ${result.reason}: ${result.error?.message}`)
  }
  const wall = Number(process.hrtime.bigint() - begun) / 1e6
  ctx.registry.delete(AgentService as never)
  return { sizes, compacting, times, wall }
}

const stats = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const total = values.reduce((sum, value) => sum + value, 0)
  return { mean: Math.round(total / values.length), median: sorted[Math.floor(sorted.length / 2)]!, max: sorted.at(-1)!, total }
}

const without = await session(undefined, 'off')
const withCompaction = await session(WINDOW, 'auto')
const a = stats(without.sizes)
const b = stats(withCompaction.sizes)
const t = stats(withCompaction.times)
console.log(`\ncompaction: a ${TURNS * (CALLS_PER_TURN + 1)}-step session, 4,000-character tool results, ${WINDOW.toLocaleString('en-US')}-token window`)
console.log(`  input tokens per request      mean      median        max        total (all requests)`)
console.log(`  without compaction       ${String(a.mean).padStart(9)} ${String(a.median).padStart(11)} ${String(a.max).padStart(10)} ${String(a.total).padStart(14)}   (past the window from request ${without.sizes.findIndex((size) => size > WINDOW) + 1})`)
console.log(`  with compaction          ${String(b.mean).padStart(9)} ${String(b.median).padStart(11)} ${String(b.max).padStart(10)} ${String(b.total).padStart(14)}   (${(a.total / b.total).toFixed(1)}x fewer)`)
console.log(`  compactions: ${withCompaction.compacting}, each ${t.median.toFixed(2)} ms median (max ${t.max.toFixed(2)} ms), ${t.total.toFixed(0)} ms of ${withCompaction.wall.toFixed(0)} ms in all`)
