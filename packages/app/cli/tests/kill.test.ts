/**
 * Real processes, real SIGKILL: `rein run` dies at chosen points of a step, then `rein resume`
 * must load the log, keep every invariant, never repeat the unsafe call, re-run the replay-safe
 * one exactly once when its outcome is unknown, and let the conversation go on.
 */

import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { startMockOpenAiServer, validateSessionInvariants, type MockReply, type MockServer, type RecordedRequest } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { FIXTURES, PACKAGE_DIR, spawnRein } from './harness.ts'

interface Scenario {
  dir: string
  server: MockServer
  write(killAt: string, hold: boolean): void
}

const scenarios: Scenario[] = []
afterEach(async () => {
  for (const scenario of scenarios.splice(0)) {
    await scenario.server.close()
    rmSync(scenario.dir, { recursive: true, force: true })
  }
})

/** A project whose model asks for `first` on the first request and then says "Recovered." */
async function scenario(first: MockReply): Promise<Scenario> {
  const server = await startMockOpenAiServer((request: RecordedRequest, index: number) => index === 0 ? first : { steps: [{ text: 'Recovered.' }] })
  const dir = mkdtempSync(join(tmpdir(), 'rein-kill-'))
  symlinkSync(join(PACKAGE_DIR, 'node_modules'), join(dir, 'node_modules'), 'dir')
  const write = (killAt: string, hold: boolean) => writeFileSync(join(dir, 'cordis.yml'), [
    "- { id: llm, name: '@rein/llm', config: { retry: { maxRetries: 0 } } }",
    `- { id: model, name: '@rein/llm-openai', config: { provider: mock, baseURL: '${server.url}', apiKeyEnv: false } }`,
    "- { id: tools, name: '@rein/tools' }",
    "- { id: sessions, name: '@rein/session' }",
    `- { id: store, name: '@rein/session-jsonl', config: { root: '${join(dir, 'sessions')}' } }`,
    "- { id: agents, name: '@rein/agent', config: { provider: mock, model: m } }",
    `- { id: crash, name: '${join(FIXTURES, 'crash-plugin.ts')}', config: { dir: '${dir}', killAt: ${killAt}, hold: ${hold} } }`,
    '',
  ].join('\n'))
  const made = { dir, server, write }
  scenarios.push(made)
  return made
}

function sessionId(dir: string): string {
  const files = readdirSync(join(dir, 'sessions')).filter((file) => file.endsWith('.jsonl'))
  expect(files).toHaveLength(1)
  return files[0]!.replace(/\.jsonl$/, '')
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [])

async function loadLog(dir: string, id: string) {
  return (await new JsonlSessionStore({ root: join(dir, 'sessions') }).load(id)).events
}

/** What the resumed request told the model about each call. */
function toolMessages(server: MockServer): { tool_call_id: string; content: string }[] {
  const body = server.requests.at(-1)!.body as { messages: { role: string; tool_call_id: string; content: string }[] }
  return body.messages.filter((message) => message.role === 'tool')
}

async function crashThenResume(s: Scenario, killAt: string, hold = false) {
  s.write(killAt, hold)
  const crashed = await spawnRein(s.dir, ['run', '--yes', 'do the work'])
  expect(crashed.signal).toBe('SIGKILL')
  const id = sessionId(s.dir)
  s.write('none', false)
  const resumed = await spawnRein(s.dir, ['resume', '--yes', id])
  expect(resumed.stderr).not.toContain('rein:')
  expect(resumed.code).toBe(0)
  expect(resumed.stdout).toBe('Recovered.\n')
  const events = await loadLog(s.dir, id)
  expect(validateSessionInvariants(events)).toEqual([])
  expect(events.filter((event) => event.type === 'turn/end').map((event) => (event.data as { reason: string }).reason)).toEqual(['interrupted', 'completed'])
  return { events, resumed }
}

const appendCall: MockReply = { steps: [{ text: 'Appending.' }, { toolCall: { id: 'c_append', name: 'append_line', arguments: '{"line":"once"}' } }] }

describe('kill -9 and resume', () => {
  it('after the answer is durable: its first batch\'s intents are durable with it, so the unsafe call is not repeated', async () => {
    const s = await scenario(appendCall)
    const { events, resumed } = await crashThenResume(s, 'assistant-durable')
    // One fsync for the answer and the intents (a later batch's calls can still be "not started").
    const answer = events.findIndex((event) => event.type === 'assistant/message')
    expect(events[answer + 1]).toMatchObject({ type: 'tool/call', data: { callId: 'c_append' } })
    expect(lines(join(s.dir, 'lines.txt'))).toEqual([])
    expect(toolMessages(s.server)[0]!.content).toContain('whether it finished is unknown. Check its effects')
    expect(resumed.stderr).toContain('append_line (c_append): outcome unknown')
  })

  it('after the intent, before the body: the outcome is unknown and the unsafe call is not repeated', async () => {
    const s = await scenario(appendCall)
    await crashThenResume(s, 'intent-durable')
    expect(lines(join(s.dir, 'lines.txt'))).toEqual([])
    expect(toolMessages(s.server)[0]!.content).toContain('whether it finished is unknown. Check its effects')
  })

  it('after the body ran, before its result was saved: the line appears once, the model is told to check', async () => {
    const s = await scenario(appendCall)
    const { resumed } = await crashThenResume(s, 'after-body')
    expect(lines(join(s.dir, 'lines.txt'))).toEqual(['once'])
    expect(toolMessages(s.server)[0]!.content).toContain('whether it finished is unknown')
    expect(resumed.stderr).toContain('append_line (c_append): outcome unknown; the model is told to check')
  })

  it('mid-stream: the turn is closed and the model asked again', async () => {
    const s = await scenario({ steps: [{ text: 'Half of the ans' }, { stall: true }] })
    s.write('none', false)
    const crashed = await spawnRein(s.dir, ['run', 'do the work'], (text, kill) => { if (text.includes('Half')) kill() })
    expect(crashed.signal).toBe('SIGKILL')
    const id = sessionId(s.dir)
    const resumed = await spawnRein(s.dir, ['resume', id])
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toBe('Recovered.\n')
    const events = await loadLog(s.dir, id)
    expect(validateSessionInvariants(events)).toEqual([])
  })

  it('mid-parallel-batch: replay-safe calls with unknown outcomes are re-run exactly once each', async () => {
    const s = await scenario({ steps: [
      { toolCall: { id: 'c_fast', name: 'write_fixed', arguments: '{}' } },
      { toolCall: { id: 'c_held', name: 'write_fixed', arguments: '{"hold":true}' } },
      { toolCall: { id: 'c_after', name: 'append_line', arguments: '{"line":"later"}' } },
    ] })
    const { resumed, events } = await crashThenResume(s, 'mid-batch', true)
    // Two runs before the crash (both started), one re-run each after it.
    expect(lines(join(s.dir, 'runs.txt'))).toEqual(['run', 'run', 'run', 'run'])
    expect(lines(join(s.dir, 'lines.txt'))).toEqual([])
    expect(resumed.stderr).toContain('ran write_fixed (c_fast) again')
    expect(resumed.stderr).toContain('ran write_fixed (c_held) again')
    expect(resumed.stderr).toContain('append_line (c_after): had not started')
    const results = events.filter((event) => event.type === 'tool/result').map((event) => [(event.data as { callId: string }).callId, (event.data as { isError: boolean }).isError])
    expect(results).toEqual([['c_fast', false], ['c_held', false], ['c_after', true]])
  })

  it('rein compact on a log a kill left mid-turn closes it without running anything again', async () => {
    const s = await scenario({ steps: [
      { toolCall: { id: 'c_fast', name: 'write_fixed', arguments: '{}' } },
      { toolCall: { id: 'c_held', name: 'write_fixed', arguments: '{"hold":true}' } },
    ] })
    s.write('mid-batch', true)
    expect((await spawnRein(s.dir, ['run', '--yes', 'do the work'])).signal).toBe('SIGKILL')
    const id = sessionId(s.dir)
    s.write('none', false)
    const requests = s.server.requests.length
    const compacted = await spawnRein(s.dir, ['compact', id])
    // This model has no known window, so nothing is compacted; what matters is what ran before that.
    expect(compacted.stderr).toContain('no known context window')
    expect(lines(join(s.dir, 'runs.txt'))).toEqual(['run', 'run'])
    expect(compacted.stderr).not.toContain('ran write_fixed')
    expect(s.server.requests).toHaveLength(requests)
    const events = await loadLog(s.dir, id)
    expect(validateSessionInvariants(events)).toEqual([])
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'interrupted' } })
  })
})
