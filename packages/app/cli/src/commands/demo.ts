/**
 * `rein demo`: the real stack — llm-openai over HTTP, tools, a subagent, the JSONL session log,
 * checkpoints, the agent loop — against a local mock server that plays a scripted model, then a
 * rewind of its edit.
 * Labelled as such; no key, no network.
 */

import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import { loadComposition } from '@rein/compose'
import { startMockOpenAiServer } from '@rein/testkit'
import type { ParsedArgs } from '../args.ts'
import { builtInRows, disposeUnlessStalled, PACKAGE_DIR } from '../composition.ts'
import type { Io } from '../io.ts'
import { DEMO_PROVIDER } from '../demo/provider.ts'
import { rewindDemoTurn } from '../demo/rewind.ts'
import { demoReply } from '../demo/script.ts'
import { createDemoWorkspace } from '../demo/workspace.ts'
import { installApproval } from '../approval.ts'
import { EXIT } from '../exit-codes.ts'
import { streamTurn } from '../session-command.ts'
import { STOPPING_THE_LOAD, stoppingTheTurn, trapInterrupts } from '../interrupts.ts'
import { colorsEnabled, Renderer } from '../render.ts'

const TASK = 'Fix the typo in README.md, then check the result.'

export async function demoCommand(args: ParsedArgs, io: Io): Promise<number> {
  const server = await startMockOpenAiServer((request) => demoReply(request))
  const workspace = await createDemoWorkspace()
  // A memory of its own: the user's would put their notes in the scripted prompt, and the demo leaves none behind.
  const memoryDir = await mkdtemp(join(tmpdir(), 'rein-demo-memory-'))
  try {
    return await runDemo(args, io, server.url, workspace.root, join(memoryDir, 'memory.db'))
  } finally {
    await workspace.dispose()
    await rm(memoryDir, { recursive: true, force: true })
    await server.close()
  }
}

async function runDemo(args: ParsedArgs, io: Io, serverUrl: string, workspaceRoot: string, memoryFile: string): Promise<number> {
  const rows: EntryOptions[] = [
    ...builtInRows({ REIN_HOME: io.env.REIN_HOME })
      .filter((row) => row.id !== 'agents')
      .map((row) => (row.id === 'memory-store' ? { ...row, config: { file: memoryFile } } : row)),
    {
      id: 'scripted-model',
      name: '@rein/llm-openai',
      config: { provider: DEMO_PROVIDER, label: 'the scripted demo model', baseURL: serverUrl, apiKeyEnv: false, models: [{ id: 'scripted', pricing: { input: 0.27, output: 1.1, cacheRead: 0.07 } }] },
    },
    { id: 'agents', name: '@rein/agent', config: { provider: DEMO_PROVIDER, model: 'scripted', system: 'You are a coding assistant working in the given workspace.' } },
  ]
  // Trapped before the load, as for every command: a signal while the rows start ends the demo (130).
  const interrupts = trapInterrupts(io, (text) => io.stderr.write(`${text}\n`), STOPPING_THE_LOAD)
  const composition = await loadComposition({ file: join(PACKAGE_DIR, 'demo.cordis.yml'), rows, resolveFrom: PACKAGE_DIR }).catch((error: unknown) => {
    interrupts.release()
    throw error
  })
  const renderer = new Renderer(io, args.options.json, colorsEnabled(io.stdout, io.env))
  interrupts.announce(stoppingTheTurn, (text) => renderer.notice(text))
  try {
    if (interrupts.signal.aborted) return EXIT.interrupted
    const { ctx } = composition
    installApproval(ctx, { yes: true, allow: [] })
    renderer.notice(`rein demo: a SCRIPTED model (a local mock server at ${serverUrl}), not a real one — it shows the loop, not intelligence.`)
    renderer.notice(`workspace ${workspaceRoot}`)
    const agent = await ctx.agents.create({ cwd: workspaceRoot })
    renderer.notice(`session ${agent.session.id}, kept so rein show ${agent.session.id} prints it afterwards (its workspace and scripted model go when the demo ends: it cannot be resumed or rewound)`, { type: 'session', id: agent.session.id })
    renderer.notice(`> ${TASK}`)
    try {
      const code = await streamTurn(io, renderer, agent, (running) => running.send(TASK), interrupts.signal)
      // The edit the turn made, undone: what `rein rewind` does for any session.
      return code === EXIT.ok ? await rewindDemoTurn(ctx, io, renderer, agent.session, args.options.json) : code
    } finally {
      await agent.close()
    }
  } finally {
    await disposeUnlessStalled(composition, undefined, io)
    interrupts.release()
  }
}
