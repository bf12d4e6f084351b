/**
 * Session logs for the log fuzzer: real ones, written by short agent runs (scripted model, real
 * tools, the JSONL store on disk), and the damage a crash, a bad disk or a careless edit does to them.
 */

import { Context } from '@deepseek-ai/cordis'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import AgentService from '@rein/agent'
import LlmRuntime from '@rein/llm'
import SessionService from '@rein/session'
import * as sessionJsonl from '@rein/session-jsonl'
import { createScriptedLlm, type ScriptedTurn } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'
import type { Rng } from '../plan.ts'
import { BYTE_MUTATIONS, mutateBytes } from './bytes.ts'

/** The whole stack in one process, its sessions in `root`. */
export async function bootStack(root: string, cwd: string) {
  const ctx = new Context()
  const fibers = [
    await ctx.plugin(LlmRuntime, { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }),
    await ctx.plugin(ToolRegistry, { askFor: [] }),
    await ctx.plugin(SessionService),
    await ctx.plugin(sessionJsonl, { root }),
    await ctx.plugin(AgentService, { provider: 'scripted', model: 'm' }),
  ]
  const turns: ScriptedTurn[] = []
  ctx.llm.registerAdapter('scripted', createScriptedLlm(() => turns.shift() ?? [{ text: 'out of script' }]))
  ctx.tools.register(defineTool({
    name: 'read',
    description: 'Reads (replay-safe).',
    parameters: { key: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    isConcurrencySafe: true,
    replaySafe: true,
    execute: (args) => `contents of ${args.key}: naïve ☃ 😀`,
  }))
  ctx.tools.register(defineTool({
    name: 'write',
    description: 'Writes (not replay-safe).',
    parameters: { text: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    effects: ['write'],
    replaySafe: false,
    execute: (args) => `wrote ${args.text.length} characters`,
  }))
  return {
    ctx,
    cwd,
    script: (...next: ScriptedTurn[]) => turns.push(...next),
    /** Unloads the plugins, last first (open sessions are closed, locks released). */
    dispose: async () => { for (const fiber of fibers.reverse()) await fiber.dispose() },
  }
}

type Stack = Awaited<ReturnType<typeof bootStack>>

/** Conversations the base logs record: parallel reads, writes, reasoning, bad arguments, several steps. */
const RUNS: { prompts: string[]; turns: ScriptedTurn[] }[] = [
  {
    prompts: ['read a and b, then write', 'write again'],
    turns: [
      [{ reasoning: 'thinking ☃' }, { text: 'Reading.' }, { toolCall: { id: 'c1', name: 'read', arguments: '{"key":"a"}' } }, { toolCall: { id: 'c2', name: 'read', arguments: '{"key":"b"}' } }, { toolCall: { id: 'c3', name: 'write', arguments: '{"text":"x"}' } }, { usage: { inputTokens: 30, outputTokens: 9, reasoningTokens: 2 } }],
      [{ text: 'Done 😀' }, { usage: { inputTokens: 50, outputTokens: 2 } }],
      [{ toolCall: { id: 'c4', name: 'write', arguments: ['{"te', 'xt":"y\\n"}'] } }],
      [{ text: 'ok' }],
    ],
  },
  {
    prompts: ['say hi', 'use a tool badly'],
    turns: [
      [{ text: 'naïve — hi' }],
      [{ toolCall: { id: 'd1', name: 'read', arguments: '{"key":' } }, { toolCall: { id: 'd2', name: 'missing_tool', arguments: '{}' } }],
      [{ text: 'That failed.' }],
    ],
  },
  {
    prompts: ['read three things one by one'],
    turns: [
      [{ toolCall: { id: 'e1', name: 'read', arguments: '{"key":"1"}' } }],
      [{ toolCall: { id: 'e2', name: 'write', arguments: '{"text":"2"}' } }],
      [{ toolCall: { id: 'e3', name: 'read', arguments: '{"key":"3"}' } }],
      [{ text: 'All read.' }],
    ],
  },
]

/** A base log: its session id and its bytes as the store wrote them. */
export interface BaseLog {
  id: string
  bytes: Buffer
}

/** Runs each conversation in its own session and returns the logs the store wrote. */
export async function writeBaseLogs(stack: Stack, root: string): Promise<BaseLog[]> {
  const logs: BaseLog[] = []
  for (const [index, run] of RUNS.entries()) {
    const id = `fuzz-base-${index + 1}`
    stack.script(...run.turns)
    const agent = await stack.ctx.agents.create({ sessionId: id, cwd: stack.cwd })
    for (const prompt of run.prompts) await agent.send(prompt)
    await agent.close()
    logs.push({ id, bytes: readFileSync(join(root, `${id}.jsonl`)) })
  }
  return logs
}

export type LogDamage = 'truncate' | 'bytes' | 'lines' | 'truncate+bytes'

/** Line ranges `[start, end)` of `bytes`, each end just past its newline (a last line without one ends at the end). */
export function lineRanges(bytes: Uint8Array): [number, number][] {
  const ranges: [number, number][] = []
  let start = 0
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x0a) {
      ranges.push([start, i + 1])
      start = i + 1
    }
  }
  if (start < bytes.length) ranges.push([start, bytes.length])
  return ranges
}

/** `bytes` damaged one way; `at` is the first byte that differs from the original. */
export function damageLog(r: Rng, bytes: Buffer): { bytes: Buffer; damage: LogDamage } {
  const roll = r.int(20)
  if (roll < 7) return { bytes: bytes.subarray(0, r.int(bytes.length + 1)), damage: 'truncate' }
  if (roll < 13) {
    let out: Uint8Array = bytes
    for (let i = 0, n = 1 + r.int(2); i < n; i++) out = mutateBytes(r, out, r.pick(BYTE_MUTATIONS.filter((kind) => kind !== 'cut'))).bytes
    return { bytes: Buffer.from(out), damage: 'bytes' }
  }
  if (roll < 18) {
    const lines = lineRanges(bytes).map(([start, end]) => bytes.subarray(start, end))
    const a = r.int(lines.length)
    const b = r.int(lines.length)
    switch (r.int(4)) {
      case 0: lines.splice(a, 1); break
      case 1: lines.splice(a, 0, lines[a]!); break
      case 2: [lines[a], lines[b]] = [lines[b]!, lines[a]!]; break
      default: lines.splice(b, 0, ...lines.splice(a, 1))
    }
    return { bytes: Buffer.concat(lines), damage: 'lines' }
  }
  const cut = bytes.subarray(0, r.int(bytes.length + 1))
  return { bytes: Buffer.from(mutateBytes(r, cut, r.pick(['flip', 'zeros', 'invalid-utf8', 'insert'] as const)).bytes), damage: 'truncate+bytes' }
}

/** The first byte where `a` and `b` differ (the shorter length when one is a prefix of the other). */
export function firstDifference(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i
  return a.length === b.length ? Infinity : n
}
