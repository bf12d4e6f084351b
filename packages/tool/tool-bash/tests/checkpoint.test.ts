// With @rein/checkpoint loaded, every bash call is covered by a workspace snapshot: what a real
// command changed (in the foreground, or in the background when its job ends) belongs to the turn
// and is rewound with it.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import AgentService, { type Agent } from '@rein/agent'
import CheckpointService, { MemoryCheckpointStore } from '@rein/checkpoint'
import { JobService } from '@rein/jobs'
import LlmRuntime from '@rein/llm'
import SessionService, { MemorySessionStore, eventData } from '@rein/session'
import { createScriptedLlm, type ScriptedLlmScript } from '@rein/testkit'
import ToolRegistry from '@rein/tools'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import * as bash from '../src/index.ts'
import { waitFor } from './processes.ts'

let dir: string
let home: string
const fibers: { dispose(): unknown }[] = []

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'rein-bash-checkpoint-')))
  home = mkdtempSync(join(tmpdir(), 'rein-bash-snapshots-'))
  vi.stubEnv('REIN_HOME', home)
})
afterEach(async () => {
  for (const fiber of fibers.splice(0).reverse()) await fiber.dispose()
  rmSync(dir, { recursive: true, force: true })
  rmSync(home, { recursive: true, force: true })
  vi.unstubAllEnvs()
})

async function boot(script: ScriptedLlmScript): Promise<{ root: Context; agent: Agent; store: MemoryCheckpointStore }> {
  const root = new Context()
  fibers.push(await root.plugin(LlmRuntime, { retry: { maxRetries: 0, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }))
  fibers.push(await root.plugin(ToolRegistry, { askFor: [] }))
  fibers.push(await root.plugin(SessionService))
  await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(new MemorySessionStore()) })
  fibers.push(await root.plugin(CheckpointService, { snapshot: { folder: join(home, 'snapshots') } }))
  const store = new MemoryCheckpointStore()
  root.checkpoints.registerStore(store)
  fibers.push(await root.plugin(AgentService, { provider: 'scripted', model: 'm' }))
  fibers.push(await root.plugin(JobService))
  fibers.push(await root.plugin(bash, { killGraceMs: 200 }))
  root.llm.registerAdapter('scripted', createScriptedLlm(script))
  const agent = await root.agents.create({ cwd: dir, workspaceRoot: dir })
  return { root, agent, store }
}

const call = (name: string, args: object, id = `c-${name}`) => ({ toolCall: { id, name, arguments: JSON.stringify(args) } })
/** The anchor the first turn recorded: the id of the user message that started it. */
const anchorOf = (agent: Agent) => {
  const start = agent.session.events.find((event) => event.type === 'turn/start')
  return start ? eventData(start, 'turn/start').anchor ?? '' : ''
}

describe('bash under checkpoints', () => {
  it('rewinds what a command changed, created and deleted in the turn', async () => {
    writeFileSync(join(dir, 'config.txt'), 'v1\n')
    writeFileSync(join(dir, 'old.txt'), 'old\n')
    const { root, agent } = await boot([
      [call('bash', { command: 'echo v2 > config.txt; rm old.txt; echo new > new.txt', description: 'Change files' })],
      [{ text: 'done' }],
    ])
    await agent.send('change them')
    expect(readFileSync(join(dir, 'config.txt'), 'utf8')).toBe('v2\n')
    const plan = await root.checkpoints.plan(agent.session.id, anchorOf(agent))
    expect(plan.items.map((item) => [item.path, item.action, item.changedWhile]).sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      ['config.txt', 'restore', 'bash: echo v2 > config.txt; rm old.txt; echo new > new.txt'],
      ['new.txt', 'remove', 'bash: echo v2 > config.txt; rm old.txt; echo new > new.txt'],
      ['old.txt', 'restore', 'bash: echo v2 > config.txt; rm old.txt; echo new > new.txt'],
    ])
    const result = await root.checkpoints.rewind(agent.session.id, anchorOf(agent))
    expect(result.restored).toHaveLength(3)
    expect(readFileSync(join(dir, 'config.txt'), 'utf8')).toBe('v1\n')
    expect(readFileSync(join(dir, 'old.txt'), 'utf8')).toBe('old\n')
    expect(existsSync(join(dir, 'new.txt'))).toBe(false)
  })

  it('rewind removes the folders a command made for the files it created, and keeps a folder that was there', async () => {
    mkdirSync(join(dir, 'kept'))
    const { root, agent } = await boot([
      [call('bash', { command: 'mkdir -p gen/deep kept/inner && echo a > gen/deep/a.txt && echo b > kept/inner/b.txt', description: 'Generate' })],
      [{ text: 'done' }],
    ])
    await agent.send('generate')
    const result = await root.checkpoints.rewind(agent.session.id, anchorOf(agent))
    expect(result.restored.map((item) => item.path).sort()).toEqual(['gen/deep/a.txt', 'kept/inner/b.txt'])
    expect(existsSync(join(dir, 'gen'))).toBe(false)
    expect(existsSync(join(dir, 'kept/inner'))).toBe(false)
    expect(existsSync(join(dir, 'kept'))).toBe(true)
  })

  it('rewind removes the empty folders a command made (mkdir -p build/out), and keeps one that was there or a person put a file in', async () => {
    mkdirSync(join(dir, 'existing'))
    const { root, agent } = await boot([
      [call('bash', { command: 'mkdir -p build/out existing/new logs', description: 'Make folders' })],
      [{ text: 'done' }],
    ])
    await agent.send('make folders')
    writeFileSync(join(dir, 'logs/mine.txt'), 'a person\'s file\n')
    const plan = await root.checkpoints.plan(agent.session.id, anchorOf(agent))
    expect(plan.items.map((item) => [item.path, item.action, item.folder]).sort((a, b) => String(a[0]).localeCompare(String(b[0])))).toEqual([
      ['build/out', 'remove', true],
      ['existing/new', 'remove', true],
      ['logs', 'drifted', true],
    ])
    const result = await root.checkpoints.rewind(agent.session.id, anchorOf(agent))
    expect(result.restored.map((item) => item.path).sort()).toEqual(['build/out', 'existing/new'])
    expect(result.drifted).toMatchObject([{ path: 'logs', reason: expect.stringContaining('holds mine.txt') }])
    expect(existsSync(join(dir, 'build'))).toBe(false)
    expect(existsSync(join(dir, 'existing/new'))).toBe(false)
    expect(existsSync(join(dir, 'existing'))).toBe(true)
    expect(readFileSync(join(dir, 'logs/mine.txt'), 'utf8')).toBe('a person\'s file\n')
    // The model is told the folders went, and which one stayed.
    const notice = agent.session.events.filter((event) => event.type === 'user/message').map((event) => eventData(event, 'user/message').message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')).at(-1)
    expect(notice).toContain('Deleted, as they did not exist before that turn: existing/new/, build/out/, build/\n')
    expect(notice).toContain('Not rewound, left as they are now: logs/ (not empty)\n')
  })

  it('rewind makes again the empty folders a command removed, and reports a folder a later call replaced with a file as done, not skipped', async () => {
    mkdirSync(join(dir, 'old'))
    mkdirSync(join(dir, 'tree/a'), { recursive: true })
    const { root, agent } = await boot([
      [call('bash', { command: 'rmdir old && rm -r tree && mkdir out', description: 'Move folders about' }, 'c1')],
      [call('bash', { command: 'rmdir out && echo x > out', description: 'A file where a folder was' }, 'c2')],
      [{ text: 'done' }],
    ])
    await agent.send('move folders about')
    const result = await root.checkpoints.rewind(agent.session.id, anchorOf(agent))
    expect([result.drifted, result.skipped, result.failed]).toEqual([[], [], []])
    expect(result.restored.filter((item) => item.existed).map((item) => item.path).sort()).toEqual(['old', 'tree/a'])
    expect(existsSync(join(dir, 'old'))).toBe(true)
    expect(existsSync(join(dir, 'tree/a'))).toBe(true)
    expect(existsSync(join(dir, 'out'))).toBe(false)
  })

  it('records a background command\'s changes when its job ends', async () => {
    const { root, agent, store } = await boot([
      [call('bash', { command: 'sleep 0.2; echo made > late.txt', description: 'Later', run_in_background: true })],
      [call('job_output', { job_id: 'bash-1', wait_ms: 10_000 })],
      [{ text: 'done' }],
    ])
    await agent.send('go')
    let records: Awaited<ReturnType<typeof store.records>> = []
    await waitFor(() => {
      void store.records(agent.session.id).then((found) => { records = found })
      return records.length === 1
    }, 'the background command\'s record')
    const [record] = records
    expect(record).toMatchObject({ path: 'late.txt', existed: false, anchor: anchorOf(agent), by: 'bash: sleep 0.2; echo made > late.txt' })
    await root.checkpoints.rewind(agent.session.id, anchorOf(agent))
    expect(existsSync(join(dir, 'late.txt'))).toBe(false)
  })
})
