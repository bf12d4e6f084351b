// The seams later packages plug into: run identity, the tool run, injections, allow-lists, child
// sessions, pinned sections, observation spill and recover.
import { readFile } from 'node:fs/promises'
import { Logger, type Exporter } from '@deepseek-ai/cordis'
import { dirname } from 'node:path'
import type { Message } from '@rein/llm'
import { MemorySessionStore, deriveMessages, eventData, type CoreEventData, type SessionEvent } from '@rein/session'
import { ReinError, defineTool, type RunIdentity, type ToolRun } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import type { Agent, LlmAttemptEndEvent, PromptSection, PromptSectionContext } from '../src/index.ts'
import { appendOpenCalls, createScriptedLlm } from '@rein/testkit'
import LlmRuntime from '@rein/llm'
import { boot, expectValidLog, types } from './fixtures.ts'

/** A tool that records the run it got and returns `text`. */
function recorder(name: string, runs: ToolRun[] = [], body: (run: ToolRun) => unknown = () => `${name} done`) {
  return defineTool({
    name,
    description: `The ${name} tool.`,
    parameters: {},
    output: { schema: { type: 'string' }, render: (_args, value) => value },
    isConcurrencySafe: true,
    execute: async (_args, run) => {
      runs.push(run)
      return await body(run) as string
    },
  })
}

const call = (name: string, id = `c-${name}`) => ({ toolCall: { id, name, arguments: '{}' } })
const startOf = (agent: Agent, turn = 1) => agent.session.events.filter((event) => event.type === 'turn/start')[turn - 1]!.data as Record<string, unknown>
const plugins = (messages: readonly Message[]) => messages.filter((message) => message.source.kind === 'plugin').map((message) => (message.content[0] as { text: string }).text)

describe('run identity', () => {
  it('writes the run, turn and anchor into turn/start and gives tools the same identity, frozen', async () => {
    const runs: ToolRun[] = []
    const { root } = await boot([[call('probe')], [{ text: 'done' }]], { agent: { name: 'coder' } })
    root.tools.register(recorder('probe', runs))
    const agent = await root.agents.create({ cwd: '/work/sub', workspaceRoot: '/work' })
    await agent.send('go')
    const start = startOf(agent)
    const userId = eventData(agent.session.events.find((event) => event.type === 'user/message')!, 'user/message').message.id
    expect(start).toMatchObject({ turn: 1, turnId: `${agent.session.id}/1`, anchor: userId })
    expect(start.runId).toMatch(/^run_/)
    const identity: RunIdentity = { agent: 'coder', sessionId: agent.session.id, conversationId: agent.session.id, runId: start.runId as string, turnId: `${agent.session.id}/1`, anchor: userId, depth: 0 }
    expect(runs[0]!.identity).toEqual(identity)
    expect(Object.isFrozen(runs[0]!.identity)).toBe(true)
    expect(runs[0]).toMatchObject({ cwd: '/work/sub', workspaceRoot: '/work', sessionId: agent.session.id })
  })

  it('refuses a continue() on a session that holds no message, instead of asking the model with none', async () => {
    const { root, llm } = await boot([[{ text: 'from nothing' }]])
    const agent = await root.agents.create()
    await expect(agent.continue()).rejects.toMatchObject({ code: 'NOTHING_TO_CONTINUE' })
    expect(llm.requests).toEqual([])
    expect(agent.session.events.filter((event) => event.type === 'turn/start')).toEqual([])
    // An injected message is something to answer.
    agent.inject({ plugin: 'test', text: 'a notice for the model' })
    expect(await agent.continue()).toMatchObject({ reason: 'completed', text: 'from nothing' })
  })

  it('anchors a continue() to the latest user message, with a run of its own', async () => {
    const { root } = await boot([[{ text: 'one' }], [{ text: 'two' }]])
    const agent = await root.agents.create()
    await agent.send('first')
    await agent.continue()
    expect(startOf(agent, 2).anchor).toBe(startOf(agent, 1).anchor)
    expect(startOf(agent, 2).runId).not.toBe(startOf(agent, 1).runId)
  })
})

describe('agent.inject', () => {
  it('holds a message injected while idle for the next turn, after the user message, and never starts a turn', async () => {
    const { root, llm } = await boot([[{ text: 'ok' }]])
    const agent = await root.agents.create()
    agent.inject({ plugin: 'jobs', text: 'job bash-1 finished' })
    await Promise.resolve()
    expect(agent.session.events).toHaveLength(0)
    expect(agent.status).toBe('idle')
    await agent.send('hello')
    expect(types(agent.session.events).slice(0, 4)).toEqual(['turn/start', 'user/message', 'user/message', 'step/start'])
    const sent = llm.requests[0]!.messages
    expect(sent.map((message) => message.source.kind)).toEqual(['user', 'plugin'])
    expect(sent[1]).toMatchObject({ role: 'user', source: { kind: 'plugin', plugin: 'jobs' } })
    expect(startOf(agent).anchor).toBe(sent[0]!.id)
  })

  it('adds a message injected during a stream after that step\'s results, never inside the call/result group', async () => {
    const ref: { agent?: Agent } = {}
    const { root, llm } = await boot((_request, index) => {
      if (index === 0) {
        ref.agent?.inject({ plugin: 'memory', text: 'remember: tabs' })
        return [call('probe', 'p1'), call('probe', 'p2')]
      }
      return [{ text: 'done' }]
    })
    root.tools.register(recorder('probe'))
    const agent = ref.agent = await root.agents.create()
    await agent.send('go')
    const second = llm.requests[1]!.messages
    expect(second.map((message) => message.source.kind)).toEqual(['user', 'model', 'tool', 'plugin'])
    expect(plugins(second)).toEqual(['remember: tabs'])
    expectValidLog(agent.session.events)
  })

  it('adds messages injected by parallel tool calls after all their results, each once', async () => {
    const ref: { agent?: Agent } = {}
    const { root, llm } = await boot([[call('a'), call('b'), call('c')], [{ text: 'done' }], [{ text: 'again' }]])
    for (const name of ['a', 'b', 'c']) {
      root.tools.register(recorder(name, [], async () => {
        ref.agent?.inject({ plugin: 'jobs', text: `from ${name}` })
        await new Promise((resolve) => setTimeout(resolve, 1))
        return `${name} done`
      }))
    }
    const agent = ref.agent = await root.agents.create()
    await agent.send('go')
    await agent.send('more')
    const second = llm.requests[1]!.messages
    expect(second.map((message) => message.source.kind)).toEqual(['user', 'model', 'tool', 'plugin', 'plugin', 'plugin'])
    expect(plugins(second).sort()).toEqual(['from a', 'from b', 'from c'])
    expect(plugins(llm.requests[2]!.messages)).toHaveLength(3)
    expectValidLog(agent.session.events)
  })

  it('is rebuilt exactly from the log on resume', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([[{ text: 'ok' }], [{ text: 'ok again' }]], { store })
    const agent = await root.agents.create({ sessionId: 'inj' })
    agent.inject({ plugin: 'jobs', text: 'notice' })
    await agent.send('hello')
    const before = agent.session.messages()
    await agent.close()
    const { agent: resumed } = await root.agents.resume('inj')
    expect(resumed.session.messages()).toEqual(before)
    expect(deriveMessages(resumed.session.events)).toEqual(before)
  })

  it('lets a plugin that knows a run\'s session reach its agent, only while the agent is live', async () => {
    const { root, llm } = await boot([[call('probe')], [{ text: 'ok' }]])
    root.tools.register(recorder('probe', [], (run) => {
      root.agents.find(run.identity!.sessionId)?.inject({ plugin: 'jobs', text: 'found by session' })
      return 'done'
    }))
    const agent = await root.agents.create()
    await agent.send('go')
    expect(plugins(llm.requests[1]!.messages)).toEqual(['found by session'])
    await agent.close()
    expect(root.agents.find(agent.session.id)).toBeUndefined()
  })

  it('refuses an injection without a plugin name or text, and after close', async () => {
    const { root } = await boot([])
    const agent = await root.agents.create()
    expect(() => agent.inject({ plugin: '', text: 'x' })).toThrow(expect.objectContaining({ code: 'INVALID_INJECTION' }))
    expect(() => agent.inject({ plugin: 'p', text: '' })).toThrow(expect.objectContaining({ code: 'INVALID_INJECTION' }))
    await agent.close()
    expect(() => agent.inject({ plugin: 'p', text: 'late' })).toThrow(expect.objectContaining({ code: 'AGENT_CLOSED' }))
  })
})

describe('tools allow-list', () => {
  it('shows the model only the allowed tools and pairs a call to any other with UNKNOWN_TOOL', async () => {
    const ran: ToolRun[] = []
    const { root, llm } = await boot([[call('fs_read'), call('bash')], [{ text: 'done' }]], { agent: { tools: ['fs_*'] } })
    root.tools.register(recorder('fs_read', ran))
    root.tools.register(recorder('bash', ran))
    const agent = await root.agents.create()
    await agent.send('go')
    expect(llm.requests[0]!.tools?.map((tool) => tool.name)).toEqual(['fs_read'])
    const results = agent.session.events.filter((event) => event.type === 'tool/result').map((event) => event.data as { callId: string; code?: string; content: { text: string }[] })
    expect(results.map((result) => [result.callId, result.code])).toEqual([['c-fs_read', undefined], ['c-bash', 'UNKNOWN_TOOL']])
    expect(results[1]!.content[0]!.text).toBe('Error: unknown tool "bash"; available tools: fs_read')
    expect(ran).toHaveLength(1)
  })

  it('takes tools back out with !pattern, and refuses a list that is not one', async () => {
    const { root, llm } = await boot([[call('save')], [{ text: 'done' }]], { agent: { tools: ['sav*', '!save'] } })
    root.tools.register(recorder('save'))
    root.tools.register(recorder('saver'))
    const agent = await root.agents.create()
    await agent.send('go')
    expect(llm.requests[0]!.tools?.map((tool) => tool.name)).toEqual(['saver'])
    const result = agent.session.events.find((event) => event.type === 'tool/result')!.data as { code?: string }
    expect(result.code).toBe('UNKNOWN_TOOL')
    await expect(root.agents.create({ tools: 'fs_*' as unknown as string[] })).rejects.toMatchObject({ code: 'INVALID_TOOLS' })
    await expect(root.agents.create({ tools: [''] })).rejects.toMatchObject({ code: 'INVALID_TOOLS' })
    expect((await root.agents.create({ tools: ['!save'] })).canUse('saver')).toBe(true)
  })

  it('gives an agent whose tools are [] no tool at all, as the list says, not every tool', async () => {
    const { root, llm } = await boot([[call('save')], [{ text: 'done' }]], { agent: { tools: [] } })
    root.tools.register(recorder('save'))
    const agent = await root.agents.create()
    expect(agent.canUse('save')).toBe(false)
    await agent.send('go')
    expect(llm.requests[0]!.tools ?? []).toEqual([])
    const result = agent.session.events.find((event) => event.type === 'tool/result')!.data as { code?: string }
    expect(result.code).toBe('UNKNOWN_TOOL')
  })

  it('lets a subagent only narrow its parent\'s list', async () => {
    const { root, llm } = await boot([[call('spawn')], [{ text: 'child done' }], [{ text: 'parent done' }]], { agent: { tools: ['fs_*', 'spawn'] } })
    for (const name of ['fs_read', 'fs_write', 'bash']) root.tools.register(recorder(name))
    let child: Agent | undefined
    root.tools.register(recorder('spawn', [], async (run) => {
      child = await root.agents.create({ tools: ['fs_read', 'bash'], parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } })
      return (await child.send('child task')).text
    }))
    await (await root.agents.create()).send('go')
    expect(llm.requests[1]!.tools?.map((tool) => tool.name)).toEqual(['fs_read'])
    expect(child?.canUse('bash')).toBe(false)
  })

  it('does not hand the row\'s memory scopes to a subagent: it has only what its own options give', async () => {
    const { root } = await boot([[call('spawn')], [{ text: 'child done' }], [{ text: 'second child done' }], [{ text: 'parent done' }]], { agent: { memory: { read: ['user', 'project'], write: ['user'] } } })
    const children: Agent[] = []
    root.tools.register(recorder('spawn', [], async (run) => {
      const parent = { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId }
      children.push(await root.agents.create({ parent }), await root.agents.create({ parent, memory: { read: ['project'] } }))
      return 'spawned'
    }))
    const main = await root.agents.create()
    await main.send('go')
    expect(main.options.memory).toEqual({ read: ['user', 'project'], write: ['user'] })
    expect(children.map((child) => child.options.memory)).toEqual([undefined, { read: ['project'] }])
  })

  it('leaves a tool whose availableTo refuses subagents out of a child\'s requests, and in its parent\'s', async () => {
    const { root, llm } = await boot([[call('spawn')], [{ text: 'child done' }], [{ text: 'parent done' }]])
    root.tools.register({ ...recorder('remember'), availableTo: (run: RunIdentity) => run.depth === 0 })
    root.tools.register(recorder('spawn', [], async (run) => {
      const child = await root.agents.create({ parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } })
      return (await child.send('child task')).text
    }))
    await (await root.agents.create()).send('go')
    expect(llm.requests[0]!.tools?.map((tool) => tool.name)).toEqual(['remember', 'spawn'])
    expect(llm.requests[1]!.tools?.map((tool) => tool.name)).toEqual(['spawn'])
  })
})

describe('child sessions', () => {
  it('records the parent in the child\'s header and gives its runs the root run\'s anchor and conversation', async () => {
    const runs: ToolRun[] = []
    const { root } = await boot([[call('spawn')], [call('probe')], [{ text: 'child done' }], [{ text: 'parent done' }]])
    root.tools.register(recorder('probe', runs))
    let child!: Agent
    root.tools.register(recorder('spawn', [], async (run) => {
      child = await root.agents.create({ name: 'helper', parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } })
      return (await child.send('child task')).text
    }))
    const parent = await root.agents.create({ cwd: '/work/sub', workspaceRoot: '/work' })
    await parent.send('go')
    const parentStart = startOf(parent)
    expect(runs[0]).toMatchObject({ cwd: '/work/sub', workspaceRoot: '/work' })
    expect(child.session.header).toMatchObject({ depth: 1, parentSessionId: parent.session.id, parentRunId: parentStart.runId, parentCallId: 'c-spawn' })
    expect(startOf(child)).toMatchObject({ anchor: parentStart.anchor, parentRunId: parentStart.runId, conversationId: parent.session.id })
    expect(runs[0]!.identity).toMatchObject({ agent: 'helper', sessionId: child.session.id, conversationId: parent.session.id, anchor: parentStart.anchor, depth: 1, parentRunId: parentStart.runId, parentSessionId: parent.session.id, parentCallId: 'c-spawn' })
  })

  it('keeps a resumed child session in its tree: parent run, root anchor, conversation and depth', async () => {
    const store = new MemorySessionStore()
    const runs: ToolRun[] = []
    const { root } = await boot([[call('spawn')], [{ text: 'child done' }], [{ text: 'parent done' }], [call('probe')], [{ text: 'child again' }]], { store })
    root.tools.register(recorder('probe', runs))
    let childId = ''
    root.tools.register(recorder('spawn', [], async (run) => {
      const child = await root.agents.create({ parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } })
      childId = child.session.id
      try {
        return (await child.send('child task')).text
      } finally {
        await child.close()
      }
    }))
    const parent = await root.agents.create()
    await parent.send('go')
    const parentStart = startOf(parent)
    const { agent: child } = await root.agents.resume(childId)
    await child.send('more')
    expect(startOf(child, 2)).toMatchObject({ anchor: parentStart.anchor, parentRunId: parentStart.runId, conversationId: parent.session.id })
    expect(runs[0]!.identity).toMatchObject({ depth: 1, anchor: parentStart.anchor, conversationId: parent.session.id, parentRunId: parentStart.runId })
  })

  it('resumes a child with no allow-list given with the tools its last request offered, never all of them', async () => {
    const store = new MemorySessionStore()
    const { root, llm } = await boot([[call('spawn')], [{ text: 'child done' }], [{ text: 'parent done' }], [{ text: 'child again' }]], { store })
    root.tools.register(recorder('probe'))
    let childId = ''
    root.tools.register(recorder('spawn', [], async (run) => {
      const child = await root.agents.create({ tools: ['probe'], parent: { sessionId: run.sessionId!, runId: run.identity!.runId, callId: run.callId } })
      childId = child.session.id
      try {
        return (await child.send('child task')).text
      } finally {
        await child.close()
      }
    }))
    await (await root.agents.create()).send('go')
    expect(llm.requests[1]!.tools?.map((tool) => tool.name)).toEqual(['probe'])
    const { agent: child } = await root.agents.resume(childId)
    expect(child.options.tools).toEqual(['probe'])
    await child.send('more')
    expect(llm.requests[3]!.tools?.map((tool) => tool.name)).toEqual(['probe'])
  })

  it('refuses a parent run its session does not have', async () => {
    const { root } = await boot([[{ text: 'ok' }]])
    const parent = await root.agents.create()
    await parent.send('go')
    await expect(root.agents.create({ parent: { sessionId: parent.session.id, runId: 'run_nope', callId: 'c1' } })).rejects.toMatchObject({ code: 'PARENT_RUN_NOT_FOUND' })
  })
})

describe('resume defaults (ctx.agents.resumeDefaults)', () => {
  async function stored() {
    const setup = await boot([[{ text: 'first' }], [{ text: 'again' }]], { store: new MemorySessionStore() })
    const agent = await setup.root.agents.create()
    await agent.send('hi')
    await agent.close()
    return { ...setup, id: agent.session.id }
  }

  it('gives a session resumed without a parent call its options, the caller\'s own winning, until its plugin goes', async () => {
    const { root, id } = await stored()
    const seen: string[] = []
    const fiber = await root.plugin({
      name: 'defaults',
      inject: ['agents'],
      apply: (ctx) => {
        ctx.agents.resumeDefaults(({ header, events }) => {
          seen.push(`${header.id}:${events.length}`)
          return { system: 'FROM-DEFAULTS', maxSteps: 3 }
        })
      },
    })
    const given = await root.agents.resume(id, { maxSteps: 5 })
    expect(given.agent.options).toMatchObject({ system: 'FROM-DEFAULTS', maxSteps: 5 })
    await given.agent.close()
    expect(seen).toEqual([expect.stringMatching(new RegExp(`^${id}:\\d+$`))])
    await fiber.dispose()
    const after = await root.agents.resume(id)
    expect(after.agent.options.system).not.toBe('FROM-DEFAULTS')
    await after.agent.close()
  })

  it('resumes with the row\'s options, warning, when the defaults throw', async () => {
    const { root, id } = await stored()
    const warnings: string[] = []
    const exporter: Exporter = { levels: { default: 2 }, export: (message) => { if (message.type === 'warn') warnings.push(Logger.format(exporter, message)) } }
    root.logger.exporter(exporter)
    root.agents.resumeDefaults(() => { throw new Error('broken plugin') })
    const { agent } = await root.agents.resume(id)
    expect((await agent.send('more')).text).toBe('again')
    await agent.close()
    expect(warnings).toEqual([expect.stringContaining(`session ${id} is resumed with the agents row's options: its resume defaults failed: Error: broken plugin`)])
  })
})

describe('pinned prompt sections', () => {
  it('renders a pinned section once per session, records it, and reads it back on resume', async () => {
    const store = new MemorySessionStore()
    const { root, llm } = await boot([[{ text: 'one' }], [{ text: 'two' }], [{ text: 'three' }]], { store })
    let version = 1
    let renders = 0
    const memory: PromptSection = { id: 'memory', order: 1, pinned: true, render: () => { renders++; return `memory v${version}` } }
    const live: PromptSection = { id: 'clock', order: 2, render: () => `now v${version}` }
    root.agents.section(memory)
    root.agents.section(live)
    const agent = await root.agents.create({ sessionId: 'pin' })
    await agent.send('a')
    version = 2
    await agent.send('b')
    await agent.close()
    const { agent: resumed } = await root.agents.resume('pin')
    await resumed.send('c')
    expect(llm.requests.map((request) => request.system)).toEqual(['memory v1\n\nnow v1', 'memory v1\n\nnow v2', 'memory v1\n\nnow v2'])
    expect(renders).toBe(1)
    const pinned = resumed.session.events.filter((event) => event.type === 'request/header').map((event) => (event.data as { pinned?: object }).pinned)
    expect(pinned.filter(Boolean)).toEqual([{ memory: 'memory v1' }])
  })
})

describe('prompt section context', () => {
  it('tells a section where the agent works and which run it renders for, and awaits one that looks something up', async () => {
    const { root, llm } = await boot([[{ text: 'ok' }]], { agent: { name: 'coder' } })
    const seen: PromptSectionContext[] = []
    root.agents.section({ id: 'lookup', order: 1, render: async (context) => {
      seen.push(context)
      await new Promise((resolve) => setTimeout(resolve, 1))
      return `scope ${context.workspaceRoot} for ${context.identity.agent}@${context.identity.depth}`
    } })
    const agent = await root.agents.create({ cwd: '/work/sub', workspaceRoot: '/work' })
    await agent.send('go')
    expect(llm.requests[0]!.system).toBe('scope /work for coder@0')
    expect(seen[0]).toMatchObject({ cwd: '/work/sub', workspaceRoot: '/work', sessionId: agent.session.id })
    expect(seen[0]!.signal).toBeInstanceOf(AbortSignal)
  })
})

describe('observation spill', () => {
  it('saves a 5 MB result whole and rebuilds the same request from the log', async () => {
    const store = new MemorySessionStore()
    const { root, llm } = await boot([[call('dump')], [{ text: 'read it' }], [{ text: 'again' }]], { store })
    const line = 'x'.repeat(99)
    const huge = Array.from({ length: 50_000 }, (_, index) => `${index} ${line}`).join('\n')
    root.tools.register(recorder('dump', [], () => huge))
    const agent = await root.agents.create({ sessionId: 'huge' })
    await agent.send('dump it')
    const result = agent.session.events.find((event) => event.type === 'tool/result')!.data as { content: { text: string }[]; spill: { path: string; chars: number; lines: number } }
    expect(result.spill).toMatchObject({ chars: huge.length, lines: 50_000 })
    expect(huge.length).toBeGreaterThan(5_000_000)
    expect(await readFile(result.spill.path, 'utf8')).toBe(huge)
    const seen = llm.requests[1]!.messages.at(-1)!.content[0]
    const text = seen?.type === 'tool-result' && seen.content[0]?.type === 'text' ? seen.content[0].text : ''
    expect(text.length).toBeLessThanOrEqual(20_000 * 0.75 + 400)
    expect(text).toContain(result.spill.path)
    const before = agent.session.messages()
    await agent.close()
    const { agent: resumed } = await root.agents.resume('huge')
    expect(resumed.session.messages()).toEqual(before)
  })

  it('never lets two call ids share a spill file', async () => {
    const { root } = await boot([[call('dump', 'a.1'), call('dump', 'a:1')], [{ text: 'ok' }]], { agent: { spillAfterChars: 200 } })
    let n = 0
    root.tools.register(recorder('dump', [], () => `${++n}`.repeat(500)))
    const agent = await root.agents.create()
    await agent.send('go')
    const spills = agent.session.events.filter((event) => event.type === 'tool/result').map((event) => (event.data as { spill: { path: string } }).spill.path)
    expect(new Set(spills).size).toBe(2)
    expect((await Promise.all(spills.map((path) => readFile(path, 'utf8')))).map((text) => text[0])).toEqual(expect.arrayContaining(['1', '2']))
  })

  it('gives tools a private spill file in the session folder for unbounded output', async () => {
    const { root } = await boot([[call('stream')], [{ text: 'done' }]])
    let path = ''
    let folder: string | undefined
    root.tools.register(recorder('stream', [], async (run) => {
      const file = await run.spill!('stdout')
      path = file.path
      folder = run.spillFolder
      await new Promise<void>((resolve, reject) => file.stream.end('lots of output', (error?: Error | null) => (error ? reject(error) : resolve())))
      return 'streamed'
    }))
    const agent = await root.agents.create()
    await agent.send('go')
    expect(path.startsWith(await agent.session.folder())).toBe(true)
    expect(folder).toBe(dirname(path))
    expect(await readFile(path, 'utf8')).toBe('lots of output')
  })
})

describe('recover on resume', () => {
  it('asks the tool for the real outcome of an unpaired call before writing a synthesized result', async () => {
    const store = new MemorySessionStore()
    const { root, llm } = await boot([[{ text: 'the child had finished' }]], { store })
    const asked: string[] = []
    root.tools.register(defineTool({
      name: 'delegate',
      description: 'Runs a subagent.',
      parameters: { task: { type: 'string', required: true } },
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: () => 'never runs here',
      recover: (c) => {
        asked.push(c.callId)
        return c.args.task === 'known' ? { value: 'child session completed: 3 files' } : undefined
      },
    }))
    const session = await root.sessions.create({ id: 'crashed', cwd: '/w' })
    appendOpenCalls(session, [{ id: 'd1', task: 'known' }, { id: 'd2', task: 'lost' }].map((c) => ({ callId: c.id, name: 'delegate', arguments: JSON.stringify({ task: c.task }) })))
    await session.flush()
    await store.close('crashed')
    const { agent, repaired } = await root.agents.resume('crashed')
    expect(asked).toEqual(['d1', 'd2'])
    expect(repaired).toMatchObject({ recovered: [{ callId: 'd1', name: 'delegate', isError: false }], paired: [{ callId: 'd2', code: 'TOOL_OUTCOME_UNKNOWN' }], rerun: [] })
    const results = agent.session.events.filter((event) => event.type === 'tool/result').map((event) => event.data as { callId: string; isError: boolean; content: { text: string }[] })
    expect(results.map((result) => [result.callId, result.isError, result.content[0]!.text.slice(0, 30)])).toEqual([
      ['d1', false, 'child session completed: 3 fil'],
      ['d2', true, 'Error: the session stopped whi'],
    ])
    await agent.continue()
    expect(llm.requests).toHaveLength(1)
    expectValidLog(agent.session.events)
  })
})

describe('a resume stopped while a tool\'s recover works', () => {
  it('saves what it found, leaves the call whose recover it stopped open, and the next resume asks that tool again', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([], { store })
    const stop = new AbortController()
    const asked: string[] = []
    root.tools.register(defineTool({
      name: 'delegate', description: 'Runs a subagent.', parameters: {}, recoverAfterInterrupt: true,
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: () => 'never runs here',
      // Continues the child until the resume is stopped, as @rein/subagents does; the second time, it finds it done.
      recover: async (c, context) => {
        asked.push(c.callId)
        if (stop.signal.aborted) return { value: 'the child completed' }
        stop.abort('SIGTERM')
        if (!context.signal.aborted) await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }))
        return { error: new ReinError('SUBAGENT_INTERRUPTED', 'the child was interrupted; resume continues it') }
      },
    }))
    // A command its recover stops first: that result is true, and is saved.
    root.tools.register(defineTool({
      name: 'command', description: 'Runs a command.', parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: () => 'never runs here',
      recover: () => { asked.push('k1'); return { error: new ReinError('COMMAND_INTERRUPTED', 'stopped what it left running') } },
    }))
    const session = await root.sessions.create({ id: 'parent', cwd: '/w' })
    appendOpenCalls(session, [{ callId: 'k1', name: 'command' }, { callId: 'd1', name: 'delegate' }])
    await session.flush()
    await store.close('parent')
    await expect(root.agents.resume('parent', { signal: stop.signal })).rejects.toMatchObject({ code: 'REPAIR_INTERRUPTED' })
    const saved = (await store.load('parent')).events.filter((event) => event.type === 'tool/result').map((event) => eventData(event, 'tool/result'))
    expect(saved.map((result) => [result.callId, result.code])).toEqual([['k1', 'COMMAND_INTERRUPTED']])
    const { repaired } = await root.agents.resume('parent')
    expect(asked).toEqual(['k1', 'd1', 'd1'])
    expect(repaired).toMatchObject({ recovered: [{ callId: 'd1', isError: false }], paired: [] })
  })
})

describe('closing a crashed log without resuming it (ctx.agents.repair)', () => {
  it('asks a tool for the outcome of the call it left open, runs nothing again, and leaves a continuing tool\'s call unknown', async () => {
    const store = new MemorySessionStore()
    const { root, llm } = await boot([], { store })
    const asked: string[] = []
    const ran: string[] = []
    const tool = (name: string, extra: Record<string, unknown>) => defineTool({
      name, description: `The ${name} tool.`, parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: (_args, run) => { ran.push(run.callId); return 'ran again' },
      recover: (c, context) => { asked.push(`${c.callId} in ${context.sessionId} at ${context.cwd}`); return { error: new ReinError('COMMAND_INTERRUPTED', 'stopped what it left running') } },
      ...extra,
    })
    // A command (stopped by its recover), a replay-safe read, and a subagent whose recover would continue it.
    root.tools.register(tool('command', {}))
    root.tools.register(tool('read', { effects: ['read'], recover: undefined }))
    root.tools.register(tool('delegate', { recoverAfterInterrupt: true }))
    const session = await root.sessions.create({ id: 'lost', cwd: '/w' })
    appendOpenCalls(session, [
      { callId: 'k1', name: 'command' },
      { callId: 'r1', name: 'read', replaySafe: true },
      { callId: 'd1', name: 'delegate' },
    ])
    await session.flush()
    await store.close('lost')

    const repaired = await root.agents.repair('lost')
    expect(asked).toEqual(['k1 in lost at /w'])
    expect(ran).toEqual([])
    expect(repaired).toEqual({
      recovered: [{ callId: 'k1', name: 'command', isError: true }],
      rerun: [],
      paired: [{ callId: 'r1', name: 'read', code: 'TOOL_OUTCOME_UNKNOWN' }, { callId: 'd1', name: 'delegate', code: 'TOOL_OUTCOME_UNKNOWN' }],
      closedTurn: 1,
    })
    // Closed and released: no agent holds it, no request was made, and it loads whole.
    const { events } = await root.sessions.load('lost')
    expect(eventData(events.find((event) => event.type === 'tool/result')!, 'tool/result')).toMatchObject({ callId: 'k1', code: 'COMMAND_INTERRUPTED' })
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'interrupted' } })
    expectValidLog(events)
    expect(llm.requests).toEqual([])
    expect(root.agents.list()).toEqual([])
    await (await root.sessions.open('lost')).close()
  })
})

describe('a request a crash cut off (no llm/attempt record)', () => {
  /** A log a kill left mid-request: the step is durable, its attempt never ended. */
  async function cutOff(root: Awaited<ReturnType<typeof boot>>['root'], store: MemorySessionStore, attempt: boolean) {
    const session = await root.sessions.create({ id: 'cut', cwd: '/w' })
    session.append('turn/start', { turn: 1, runId: 'run_1' })
    session.append('user/message', { message: { id: 'u1', role: 'user', content: [{ type: 'text', text: 'a question long enough to count' }], source: { kind: 'user' } } })
    session.append('step/start', { turn: 1, step: 1, request: { provider: 'scripted', model: 'm' } })
    if (attempt) session.append('llm/attempt', { provider: 'scripted', model: 'm', retry: 0, fallback: 0, startedAt: 1, endedAt: 2, shown: false, failure: { code: 'SERVER', message: 'down' }, usage: { inputTokens: 7, outputTokens: 0 } })
    await session.flush()
    await store.close('cut')
  }
  const attempts = (events: readonly { type: string; data: unknown }[]) => events.filter((event) => event.type === 'llm/attempt').map((event) => event.data as { usageEstimated?: true; usage: { inputTokens: number } })

  it('is recorded once as an estimate, and a second repair adds nothing', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([], { store })
    await cutOff(root, store, false)
    await root.agents.repair('cut')
    await root.agents.repair('cut')
    const estimated = attempts((await root.sessions.load('cut')).events)
    expect(estimated).toHaveLength(1)
    expect(estimated[0]).toMatchObject({ usageEstimated: true, failure: { code: 'ABORTED' } })
    expect(estimated[0]!.usage.inputTokens).toBeGreaterThan(0)
  })

  it('tells lifecycle listeners of the attempt it recorded, once, as the run and place the log names, however often it is repaired', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([], { store })
    const session = await root.sessions.create({ id: 'cut', cwd: '/w' })
    session.append('turn/start', { turn: 1, runId: 'run_1', turnId: 'cut/1', anchor: 'u1' })
    session.append('user/message', { message: { id: 'u1', role: 'user', content: [{ type: 'text', text: 'a question long enough to count' }], source: { kind: 'user' } } })
    session.append('step/start', { turn: 1, step: 1, request: { provider: 'scripted', model: 'm' } })
    session.append('llm/attempt', { provider: 'scripted', model: 'm', retry: 0, fallback: 0, startedAt: 1, endedAt: 2, shown: false, failure: { code: 'SERVER', message: 'down' } })
    // Its retry was on the wire when the kill came.
    session.append('llm/resend', { request: { provider: 'scripted', model: 'm' }, retry: 1, fallback: 0 })
    await session.flush()
    await store.close('cut')
    const ended: LlmAttemptEndEvent[] = []
    let started = 0
    root.on('agent/llm-end', (event) => { ended.push(event) })
    root.on('agent/llm-start', () => { started++ })
    await root.agents.repair('cut')
    await root.agents.repair('cut')
    await (await root.agents.resume('cut')).agent.close()
    const estimate = attempts((await root.sessions.load('cut')).events)[1] as unknown as CoreEventData['llm/attempt']
    expect(ended).toEqual([expect.objectContaining({
      repaired: true, usageEstimated: true, errorCode: 'ABORTED', usage: estimate.usage, route: 'scripted', requestModel: 'm',
      turn: 1, step: 1, retry: 1, fallback: 0, startedAt: estimate.startedAt, endedAt: estimate.startedAt,
      identity: expect.objectContaining({ runId: 'run_1', turnId: 'cut/1', sessionId: 'cut', anchor: 'u1' }),
    })])
    expect(ended[0]!.output).toBeUndefined()
    expect(ended[0]!.input.messages).toHaveLength(1)
    expect(started).toBe(0)
  })

  it('tells nothing while it cannot save the record, and tells it once the repair that saves it does', async () => {
    let full = true
    // A full disk for every batch holding the estimate, until it is freed.
    class FullDiskStore extends MemorySessionStore {
      override async append(id: string, events: readonly SessionEvent[]) {
        if (full && events.some((event) => event.type === 'llm/attempt')) throw new Error('no space left on device')
        return super.append(id, events)
      }
    }
    const store = new FullDiskStore()
    const { root } = await boot([], { store })
    await cutOff(root, store, false)
    const ended: LlmAttemptEndEvent[] = []
    root.on('agent/llm-end', (event) => { ended.push(event) })
    await expect(root.agents.repair('cut')).rejects.toThrow(/no space left/)
    expect(ended).toEqual([])
    full = false
    await root.agents.repair('cut')
    await root.agents.repair('cut')
    expect(ended).toHaveLength(1)
    expect(attempts((await root.sessions.load('cut')).events)).toHaveLength(1)
  })

  it('is not estimated when its attempt record landed before the kill', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([], { store })
    await cutOff(root, store, true)
    await root.agents.repair('cut')
    expect(attempts((await root.sessions.load('cut')).events)).toEqual([expect.objectContaining({ usage: { inputTokens: 7, outputTokens: 0 } })])
  })
})

describe('routes checked against a catalog looked up asynchronously', () => {
  it('does not hang creating an agent or its turns when the catalog lookup never answers', async () => {
    const { root, llm } = await boot([[{ text: 'answered' }]], { llm: { catalogTimeoutMs: 20 } })
    Object.assign(llm, { resolveModel: () => new Promise(() => {}) })
    const agent = await root.agents.create()
    expect(await agent.send('go')).toMatchObject({ reason: 'completed', text: 'answered' })
  })

  it('does not refuse maxCost for a priced model whose catalog answers later', async () => {
    const { root, llm } = await boot([[{ text: 'priced' }]])
    const info = { id: 'm', pricing: { input: 1, output: 1 } }
    Object.assign(llm, { resolveModel: () => new Promise((resolve) => setTimeout(() => resolve(info), 5)) })
    const agent = await root.agents.create({ maxCost: 1 })
    expect(await agent.send('go')).toMatchObject({ reason: 'completed' })
  })
})

describe('a call left for recover by an interrupt', () => {
  /** A tool that waits for its signal and ends with an error, and whose recover reports `found`. */
  function continuing(name: string, found: () => { value: string } | undefined, recoverAfterInterrupt = true) {
    return defineTool({
      name,
      description: 'Waits until stopped.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: (_args, run) => new Promise<string>((_resolve, reject) => {
        run.signal.addEventListener('abort', () => reject(new Error('stopped with work left')), { once: true })
      }),
      cancelGraceMs: 100,
      recover: found,
      recoverAfterInterrupt,
    })
  }
  const started = (agent: Agent, name: string) => new Promise<void>((resolve) => {
    agent.subscribe((event) => { if (event.type === 'tool-start' && event.name === name) resolve() })
  })

  it('loses the work an interrupt stopped when the call is paired with the interrupt error instead of left for recover', async () => {
    const { root } = await boot([[call('long'), call('quick')], [{ text: 'went on' }]])
    let recovered = 0
    root.tools.register(continuing('long', () => { recovered++; return { value: 'finished on resume' } }))
    root.tools.register(recorder('quick'))
    const agent = await root.agents.create()
    const ends: unknown[] = []
    agent.subscribe((event) => { if (event.type === 'tool-end') ends.push({ name: event.name, resumable: event.resumable }) })
    const running = agent.send('go')
    await started(agent, 'long')
    await agent.interrupt()
    expect(await running).toMatchObject({ reason: 'interrupted' })
    // Listeners hear which call waits for the resume.
    expect(ends).toEqual(expect.arrayContaining([{ name: 'long', resumable: true }, { name: 'quick', resumable: undefined }]))
    // The log holds the turn open, the interrupted call without a result, the other call paired.
    const types = agent.session.events.map((event) => event.type)
    expect(types.filter((type) => type === 'turn/end')).toHaveLength(0)
    const results = agent.session.events.filter((event) => event.type === 'tool/result').map((event) => eventData(event, 'tool/result').callId)
    expect(results).toEqual(['c-quick'])
    // The next turn first lets recover pair it, then runs.
    expect(await agent.send('more')).toMatchObject({ reason: 'completed', text: 'went on' })
    expect(recovered).toBe(1)
    const long = agent.session.events.find((event) => event.type === 'tool/result' && eventData(event, 'tool/result').callId === 'c-long')!
    expect(eventData(long, 'tool/result')).toMatchObject({ isError: false, content: [{ type: 'text', text: 'finished on resume' }] })
    expectValidLog(agent.session.events)
  })

  it('pairs the call with its error when the turn is cancelled, or the tool does not ask to be left open', async () => {
    for (const [stop, flag] of [['cancel', true], ['interrupt', false]] as const) {
      const { root } = await boot([[call('long')], [{ text: 'next' }]])
      root.tools.register(continuing('long', () => ({ value: 'should not be asked' }), flag))
      const agent = await root.agents.create()
      const running = agent.send('go')
      await started(agent, 'long')
      if (stop === 'cancel') agent.cancel()
      else await agent.interrupt()
      await running
      const result = agent.session.events.find((event) => event.type === 'tool/result')
      expect(result && eventData(result, 'tool/result').isError).toBe(true)
      expect(agent.session.events.at(-1)!.type).toBe('turn/end')
      expectValidLog(agent.session.events)
    }
  })

  it('is continued by a resume in a new process: the store closed, the log opened again', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([[call('long')], [{ text: 'resumed answer' }]], { store })
    root.tools.register(continuing('long', () => ({ value: 'finished on resume' })))
    const agent = await root.agents.create()
    const running = agent.send('go')
    await started(agent, 'long')
    await agent.interrupt()
    await running
    const id = agent.session.id
    await agent.close()
    const { agent: again, repaired } = await root.agents.resume(id)
    expect(repaired).toMatchObject({ recovered: [{ callId: 'c-long', isError: false }], closedTurn: 1 })
    expect(await again.continue()).toMatchObject({ reason: 'completed', text: 'resumed answer' })
    expectValidLog(again.session.events)
  })

  it('takes a recover that knows the call failed as the error result, with its code', async () => {
    const store = new MemorySessionStore()
    const { root } = await boot([[{ text: 'ok' }]], { store })
    root.tools.register(defineTool({
      name: 'job',
      description: 'A job.',
      parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: () => 'never runs here',
      recover: () => ({ error: new ReinError('TOOL_NOT_STARTED', 'the job never started; call it again') }),
    }))
    const session = await root.sessions.create({ id: 'crashed-job', cwd: '/w' })
    appendOpenCalls(session, [{ callId: 'j1', name: 'job' }])
    await session.flush()
    await store.close('crashed-job')
    const { agent, repaired } = await root.agents.resume('crashed-job')
    expect(repaired.recovered).toEqual([{ callId: 'j1', name: 'job', isError: true }])
    const result = eventData(agent.session.events.find((event) => event.type === 'tool/result')!, 'tool/result')
    expect(result).toMatchObject({ isError: true, code: 'TOOL_NOT_STARTED', content: [{ type: 'text', text: 'Error: the job never started; call it again' }] })
  })
})

describe('an agent whose agents row was disposed (rein chat goes on with it)', () => {
  it('follows a provider row restarted after, rather than end every turn interrupted on the stopped runtime', async () => {
    const { root, fibers } = await boot([[{ text: 'one' }], [{ text: 'two' }], [{ text: 'three' }]])
    const agent = await root.agents.create()
    expect((await agent.send('a')).text).toBe('one')
    await fibers.agents.dispose()
    expect((await agent.send('b')).text).toBe('two')
    // The llm row restarts (an edit of its config): a new runtime, with the adapter registered again.
    await fibers.llm.dispose()
    await root.plugin(LlmRuntime, {})
    root.llm.registerAdapter('scripted', createScriptedLlm([[{ text: 'three' }]]))
    expect(await agent.send('c')).toMatchObject({ reason: 'completed', text: 'three' })
    await agent.close()
  })
})
