/**
 * What a foreground subagent call costs over doing the same work in the parent: one lookup and an
 * answer, done by the agent itself (2 requests) or by a child it delegates to (the same 2 requests
 * in the child's own session, plus the parent's call and its answer: 4). Sessions are JSONL files
 * on disk, the model a scripted adapter answering at once, so the figures are rein's own cost: a
 * child session created, written and closed, and the extra requests. Run: pnpm bench.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import AgentService from '@rein/agent'
import LlmRuntime, { type AdapterRequest } from '@rein/llm'
import SessionService from '@rein/session'
import * as jsonl from '@rein/session-jsonl'
import SubagentService from '@rein/subagents'
import { createScriptedLlm, type ScriptedTurn } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'
import { measure, report } from './measure.ts'

const root = mkdtempSync(join(tmpdir(), 'rein-bench-subagent-'))
const TASK = 'look up rein'
const CHILD_TASK = 'look up rein for me'

/** Answers by conversation: the child's requests start with its own task. */
function reply(request: AdapterRequest): ScriptedTurn {
  const first = request.messages.find((message) => message.role === 'user')?.content[0]
  const task = first?.type === 'text' ? first.text : ''
  const answered = request.messages.filter((message) => message.role === 'assistant').length
  const call = (name: string, args: object) => [{ toolCall: { id: `c${answered}`, name, arguments: JSON.stringify(args) } }]
  if (task === CHILD_TASK || task === TASK) {
    if (answered === 0) return task === TASK && delegating ? call('subagent', { description: 'look it up', prompt: CHILD_TASK }) : call('lookup', { word: 'rein' })
    return [{ text: 'rein: a strap to guide a horse' }]
  }
  return [{ text: 'unexpected' }]
}

let delegating = false
const ctx = new Context()
await ctx.plugin(LlmRuntime, { retry: { maxRetries: 0 } })
await ctx.plugin(ToolRegistry)
await ctx.plugin(SessionService)
await ctx.plugin(jsonl, { root })
await ctx.plugin(AgentService, { provider: 'scripted', model: 'm' })
await ctx.plugin(SubagentService)
ctx.llm.registerAdapter('scripted', createScriptedLlm(reply))
ctx.tools.register(defineTool({
  name: 'lookup', description: 'Looks a word up.', parameters: { word: { type: 'string', required: true } },
  output: { schema: { type: 'string' }, render: (_a, v) => v }, execute: (args) => `${args.word}: a strap`,
  isConcurrencySafe: true, replaySafe: true,
}))

const turn = (delegate: boolean) => async () => {
  delegating = delegate
  const agent = await ctx.agents.create({ cwd: root })
  const result = await agent.send(TASK)
  if (result.reason !== 'completed') throw new Error(`the run ended ${result.reason}`)
  await agent.close()
}
const options = { iterations: 20, rounds: 9, warmup: 2 }
const inParent = await measure('the lookup done by the agent itself (2 requests, 1 session)', turn(false), options)
const delegated = await measure('the same lookup by a foreground subagent (4 requests, 2 sessions)', turn(true), options)
report('subagent: a foreground subagent call against the same work in the parent, JSONL sessions, median of 9', inParent, [delegated])
rmSync(root, { recursive: true, force: true })
