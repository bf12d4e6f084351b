/**
 * Per-call cost of `ctx.tools.execute` for a trivial tool, against calling the same function
 * directly and against the least any caller must do (JSON.parse the model's arguments, then call).
 * The async variant pays for the deadline (a timer and a listener) that a synchronous answer skips.
 * Run: pnpm bench (from the repository root; it builds first and measures the built packages).
 * Ratios are what to compare across machines. With BENCH_JSON=1 it prints one line
 * `BENCH_JSON {…}` (nanoseconds per call) instead (bench/loop/run.mjs reads it).
 */

import { Context } from '@deepseek-ai/cordis'
import ToolRegistry, { defineTool } from '@rein/tools'
import { measure, report, type Measurement } from './measure.ts'

const add = (args: { a: number; b: number }) => ({ sum: args.a + args.b })

const tool = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  parameters: { a: { type: 'number', required: true }, b: { type: 'number', required: true } },
  output: {
    schema: { type: 'object', additionalProperties: false, properties: { sum: { type: 'number', required: true } } },
    render: (_args, value) => String(value.sum),
  },
  execute: (args) => add(args),
})

const asyncTool = { ...tool, name: 'add_async', execute: async (args: { a: number; b: number }) => add(args) }

const root = new Context()
await root.plugin(ToolRegistry)
// Held once, as an agent loop holds it: each `root.tools` read is a lookup through cordis's context proxy.
const tools = root.tools
tools.register(tool)
tools.register(asyncTool)
const raw = '{"a":1,"b":2}'
const signal = new AbortController().signal

const direct = await measure('direct call', () => add({ a: 1, b: 2 }))
const parsed = await measure('JSON.parse + direct call', () => add(JSON.parse(raw) as { a: number; b: number }))
const bare = await measure('ctx.tools.execute, no hooks', () => tools.execute({ callId: 'c', name: 'add', arguments: raw, signal }))
const bareAsync = await measure('ctx.tools.execute, async body, no hooks', () => tools.execute({ callId: 'c', name: 'add_async', arguments: raw, signal }))
tools.preExecute(() => undefined)
tools.guard(() => undefined)
tools.wrapExecute((_call, next) => next())
tools.postExecute(() => undefined)
tools.onResult(() => undefined)
const hooked = await measure('ctx.tools.execute, one of each hook', () => tools.execute({ callId: 'c', name: 'add', arguments: raw, signal }))

if (process.env.BENCH_JSON === '1') {
  const ns = (entry: Measurement) => entry.nsPerOp
  console.log(`BENCH_JSON ${JSON.stringify({ directNs: ns(direct), parsedNs: ns(parsed), executeNs: ns(bare), executeAsyncNs: ns(bareAsync), executeHookedNs: ns(hooked) })}`)
} else {
  report('tools-overhead: one trivial call (median of 7 rounds x 20000)', direct, [parsed, bare, bareAsync, hooked])
  report('tools-overhead: against the parse-and-call floor', parsed, [bare, bareAsync, hooked])
}
