/**
 * Two figures for the durable agent:
 * 1. resume time for a 10,000-event session against reading and JSON.parse-ing the same file;
 * 2. request bytes per step over a 20-step run against a mock server, and whether each request
 *    starts with the previous one's bytes (the prefix a provider cache can reuse).
 * Run: pnpm bench:micro (from the repository root). With BENCH_JSON=1 it prints one line
 * `BENCH_JSON {…}` with the figures instead (bench/loop/run.mjs reads it).
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import AgentService from '@rein/agent'
import LlmRuntime, { assistantMessage, userMessage } from '@rein/llm'
import * as openai from '@rein/llm-openai'
import SessionService from '@rein/session'
import * as jsonl from '@rein/session-jsonl'
import { startMockOpenAiServer } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'
import { measurePair, report } from './measure.ts'

/** Alternating rounds of the parse and the resume; each resume is tens of milliseconds. */
const ROUNDS = Number(process.env.ROUNDS ?? 21)
const root = mkdtempSync(join(tmpdir(), 'rein-bench-'))
const json = process.env.BENCH_JSON === '1'
const figures: Record<string, unknown> = {}

async function stack(baseURL = 'http://127.0.0.1:1/v1') {
  const ctx = new Context()
  await ctx.plugin(LlmRuntime, { retry: { maxRetries: 0 } })
  await ctx.plugin(openai, { provider: 'mock', baseURL, apiKeyEnv: false })
  await ctx.plugin(ToolRegistry)
  await ctx.plugin(SessionService)
  await ctx.plugin(jsonl, { root })
  await ctx.plugin(AgentService, { provider: 'mock', model: 'm' })
  ctx.tools.register(defineTool({
    name: 'lookup', description: 'Looks a word up.', parameters: { word: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_a, v) => v }, execute: (args) => `${args.word}: ${'definition '.repeat(20)}`,
    isConcurrencySafe: true, replaySafe: true,
  }))
  return ctx
}

// 1. Resume a 10,000-event session.
const EVENTS = 10_000
{
  const ctx = await stack()
  const session = await ctx.sessions.create({ id: 'big', cwd: root })
  const source = { kind: 'model', provider: 'mock', model: 'm' } as const
  let turn = 0
  while (session.events.length < EVENTS - 10) {
    turn++
    session.append('turn/start', { turn })
    session.append('user/message', { message: userMessage(`question ${turn}: ${'context '.repeat(30)}`) })
    for (let step = 1; step <= 3; step++) {
      session.append('step/start', { turn, step })
      const call = { type: 'tool-call' as const, id: `c${turn}_${step}`, name: 'lookup', arguments: `{"word":"w${turn}_${step}"}` }
      session.append('assistant/message', { message: assistantMessage(step < 3 ? [{ type: 'text', text: 'Looking it up.' }, call] : [{ type: 'text', text: 'answer '.repeat(60) }], source), usage: { inputTokens: 900, outputTokens: 80, cacheReadTokens: 800 }, provider: 'mock', model: 'm' })
      if (step < 3) {
        session.append('tool/call', { callId: call.id, name: 'lookup', arguments: call.arguments, replaySafe: true })
        session.append('tool/result', { callId: call.id, content: [{ type: 'text', text: `w: ${'definition '.repeat(20)}` }], isError: false })
      }
      session.append('step/end', { turn, step })
    }
    session.append('turn/end', { turn, reason: 'completed' })
  }
  await session.close()
  const file = join(root, 'big.jsonl')
  const bytes = readFileSync(file).length
  const events = session.events.length

  const parse = async () => { for (const line of readFileSync(file, 'utf8').split('\n')) if (line) JSON.parse(line) }
  const resume = async () => {
    const { agent } = await ctx.agents.resume('big')
    agent.session.messages()
    await agent.close()
  }
  const [floor, ours] = await measurePair(
    { name: 'readFile + JSON.parse per line', operation: parse },
    { name: 'ctx.agents.resume + derive the next request', operation: resume },
    { rounds: ROUNDS },
  )
  if (json) Object.assign(figures, { events, bytes, rounds: ROUNDS, parseMs: floor.nsPerOp / 1e6, resumeMs: ours.nsPerOp / 1e6 })
  else report(`agent-session: resume a ${events}-event session (${(bytes / 1024 / 1024).toFixed(1)} MiB), median of ${ROUNDS} alternating rounds`, floor, [ours])
}

if (process.env.ONLY_RESUME) process.exit(0)
// 2. Request bytes over a 20-step run.
{
  const STEPS = 20
  const server = await startMockOpenAiServer((_request, index) => index < STEPS - 1
    ? { steps: [{ toolCall: { id: `c${index}`, name: 'lookup', arguments: `{"word":"w${index}"}` } }], usage: { prompt_tokens: 100, completion_tokens: 10 } }
    : { steps: [{ text: 'done' }] })
  const ctx = await stack(server.url)
  const agent = await ctx.agents.create({ cwd: root, maxSteps: 25, system: 'You look words up.' })
  await agent.send('Look up twenty words, one at a time.')
  await agent.close()
  const bodies = server.requests.map((request) => request.raw)
  let prefixKept = 0
  for (let i = 1; i < bodies.length; i++) {
    const previous = JSON.stringify((JSON.parse(bodies[i - 1]!) as { messages: unknown }).messages).slice(0, -1)
    if (JSON.stringify((JSON.parse(bodies[i]!) as { messages: unknown }).messages).startsWith(previous)) prefixKept++
  }
  const sizes = bodies.map((body) => body.length)
  const growth = sizes.slice(1).map((size, i) => size - sizes[i]!)
  if (json) Object.assign(figures, { requestBytes: sizes, prefixKept, prefixCompared: bodies.length - 1 })
  else {
    console.log(`\nagent-session: request bytes per step over a ${STEPS}-step run`)
    console.log(`  bytes: ${sizes.join(' ')}`)
    console.log(`  growth per step: min ${Math.min(...growth)}, max ${Math.max(...growth)} (one assistant tool call + one result)`)
    console.log(`  requests whose messages extend the previous request byte for byte: ${prefixKept}/${bodies.length - 1}`)
  }
  await server.close()
}

rmSync(root, { recursive: true, force: true })
if (json) console.log(`BENCH_JSON ${JSON.stringify(figures)}`)
