/**
 * The whole stack a rewind talks to: a scripted LLM, tools, sessions on disk (session-jsonl),
 * agents and checkpoints, over a temp workspace; REIN_HOME points at a temp folder.
 */

import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import AgentService, { type Agent } from '@rein/agent'
import LlmRuntime, { type AdapterRequest } from '@rein/llm'
import SessionService, { type SessionEvent } from '@rein/session'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { createScriptedLlm, type ScriptedTurn } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'
import { afterEach, vi } from 'vitest'
import { CheckpointService, MemoryCheckpointStore, type CheckpointStore } from '../src/index.ts'
import { readIfFile, tempRoot } from './harness.ts'

/** Each test's plugins, newest last: disposed newest first, so agents close their sessions (and locks) before the folders go. */
const fibers: { dispose(): unknown }[] = []

afterEach(async () => {
  for (const fiber of fibers.splice(0).reverse()) await fiber.dispose()
  vi.unstubAllEnvs()
})

/**
 * The LLM's answers per conversation, keyed by the first user message's text, so a parent and a
 * subagent each get theirs in order however their requests interleave.
 */
export type Conversations = Record<string, readonly ScriptedTurn[]>

/** A tool call step for the scripted LLM. */
export function call(name: string, args: Record<string, string> = {}): ScriptedTurn {
  return [{ toolCall: { name, arguments: JSON.stringify(args) } }]
}

/** A text answer. */
export function say(text: string): ScriptedTurn {
  return [{ text }]
}

function route(conversations: Conversations) {
  const used = new Map<string, number>()
  return (request: AdapterRequest): ScriptedTurn => {
    const first = request.messages.find((message) => message.source.kind === 'user')
    const block = first?.content.find((part) => part.type === 'text')
    const key = block?.type === 'text' ? block.text : ''
    const index = used.get(key) ?? 0
    used.set(key, index + 1)
    const turn = conversations[key]?.[index]
    if (!turn) throw new Error(`no scripted answer #${index + 1} for the conversation that began with "${key}"`)
    return turn
  }
}

/** Every tool the tests use: a recorded write, subagents (awaited or not) and a gate. */
export async function bootStack(conversations: Conversations, options: { checkpoints?: CheckpointStore; store?: JsonlSessionStore } = {}) {
  const home = await tempRoot()
  vi.stubEnv('REIN_HOME', home)
  const workspace = await tempRoot()
  const root = new Context()
  fibers.push(await root.plugin(LlmRuntime, { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }))
  // No approval service: ask for nothing, so the write tool runs.
  fibers.push(await root.plugin(ToolRegistry, { askFor: [] }))
  fibers.push(await root.plugin(SessionService))
  const sessions = options.store ?? new JsonlSessionStore({ root: join(home, 'sessions') })
  await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(sessions) })
  fibers.push(await root.plugin(CheckpointService, {}))
  const checkpoints = options.checkpoints ?? new MemoryCheckpointStore()
  root.checkpoints.registerStore(checkpoints)
  fibers.push(await root.plugin(AgentService, { provider: 'scripted', model: 'm' }))
  const llm = createScriptedLlm(route(conversations))
  root.llm.registerAdapter('scripted', llm)

  const gates = new Map<string, () => void>()
  const background: Promise<unknown>[] = []
  const children: Agent[] = []
  const gate = (key: string) => () => gates.get(key)?.()
  root.tools.register(defineTool({
    name: 'write',
    description: 'Writes a file.',
    parameters: { path: { type: 'string', required: true }, text: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    effects: ['write'],
    execute: async (args, run) => {
      const file = join(run.workspaceRoot, args.path)
      const before = await readIfFile(file)
      if (!run.checkpoint) throw new Error('the call has no checkpoint handle')
      await run.checkpoint.record({ root: run.workspaceRoot, path: args.path, existed: before !== null, before, after: Buffer.from(args.text) })
      await writeFile(file, args.text)
      return `wrote ${args.path}`
    },
  }))
  const spawn = async (run: Parameters<Parameters<typeof defineTool>[0]['execute']>[1]) => {
    const child = await root.agents.create({ parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } })
    children.push(child)
    return child
  }
  root.tools.register(defineTool({
    name: 'spawn',
    description: 'Runs a subagent and waits for it.',
    parameters: { task: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: async (args, run) => (await (await spawn(run)).send(args.task)).text,
  }))
  root.tools.register(defineTool({
    name: 'spawn_background',
    description: 'Starts a subagent and returns at once.',
    parameters: { task: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: async (args, run) => {
      background.push((await spawn(run)).send(args.task))
      return 'started'
    },
  }))
  root.tools.register(defineTool({
    name: 'wait',
    description: 'Waits until the test opens the gate.',
    parameters: { key: { type: 'string', required: true } },
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    execute: async (args) => {
      await new Promise<void>((resolve) => gates.set(args.key, resolve))
      return 'opened'
    },
  }))
  return { root, llm, home, workspace, checkpoints, sessions, children, background, gate, gates }
}

/** The anchor of an agent's first turn (the id of the message that started it), as its `turn/start` records it. */
export function anchorOf(agent: Agent): string {
  const start = agent.session.events.find((event) => event.type === 'turn/start')
  if (!start) throw new Error(`session ${agent.session.id} has no turn yet`)
  return (start.data as { anchor: string }).anchor
}

/** The `checkpoint/rewind` events of a log. */
export function rewindEvents(events: readonly SessionEvent[]) {
  return events.filter((event) => event.type === 'checkpoint/rewind')
}

/** The texts of the user messages a plugin added to a log, with the plugin's name. */
export function pluginMessages(events: readonly SessionEvent[]) {
  return events.flatMap((event) => {
    if (event.type !== 'user/message') return []
    const { message } = event.data as { message: { source: { kind: string; plugin?: string }; content: { type: string; text?: string }[] } }
    if (message.source.kind !== 'plugin') return []
    return [{ plugin: message.source.plugin, text: message.content.map((part) => part.text ?? '').join('') }]
  })
}

/** The user messages a request carried, as text, in order. */
export function userTexts(request: AdapterRequest): string[] {
  return request.messages
    .filter((message) => message.role === 'user' && message.source.kind !== 'tool')
    .map((message) => message.content.map((part) => (part.type === 'text' ? part.text : '')).join(''))
}
