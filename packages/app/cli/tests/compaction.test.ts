// Compaction from the CLI, against the mock server: the agent compacts by itself before the window
// fills, the status line shows context use, `rein show` marks the compaction, and `rein compact`
// compacts a stored session now.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { validateSessionInvariants, type MockReply, type RecordedRequest } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, rein, sessionIdOf, spawnRein } from './harness.ts'

const setUp = projectPerTest(afterEach)

type Wire = { messages: { role: string; content?: string | null }[] }
const isSummaryRequest = (request: RecordedRequest) => String((request.body as Wire).messages[0]?.content ?? '').startsWith('You write the summary')

/** The input a provider reports for `request`: about 4 characters a token, as it read them. */
function readUsage(request: RecordedRequest) {
  return { prompt_tokens: Math.ceil(JSON.stringify((request.body as Wire).messages).length / 4), completion_tokens: 4 }
}

/**
 * Each turn: one `dump` of a 2,000-character file, then "done", with the input read reported (a
 * resumed session's meter starts from the log's last report); summary requests get fixed sections.
 */
function script(request: RecordedRequest, index: number): MockReply {
  if (isSummaryRequest(request)) return { steps: [{ text: '## Goal\nRead the files.\n## Decisions\nNone.\n## Open tasks\nMore reading.\n## Notes\nNone.' }] }
  const last = (request.body as Wire).messages.at(-1)!
  if (last.role === 'tool') return { steps: [{ text: 'done' }], usage: readUsage(request) }
  return { steps: [{ toolCall: { id: `call_${index}`, name: 'dump', arguments: JSON.stringify({ path: `src/file-${index}.txt` }) } }], usage: readUsage(request) }
}

describe('compaction from the CLI', () => {
  it('compacts before the window fills, says so, shows context use, and rein show marks it', async () => {
    const p = await setUp(script, { contextWindow: 4_000, agent: { compaction: { reserveTokens: 500, summaryMaxTokens: 256 } } })
    const env = { REIN_HOME: p.home }
    const first = await rein(p.dir, ['run', 'task 1'], { env })
    expect(first.code).toBe(0)
    expect(first.stderr).toMatch(/ · context \d+% of 4k · completed/)
    const id = sessionIdOf(first)
    let compacted = ''
    for (let turn = 2; turn <= 8; turn++) {
      const run = await rein(p.dir, ['run', '--session', id, `task ${turn}`], { env })
      expect(run.code).toBe(0)
      if (run.stderr.includes('[compacted]')) compacted = run.stderr
    }
    expect(compacted).toMatch(/\[compacted\] pruned \d+ tool results?: about [\d,]+ → [\d,]+ tokens/)
    const shown = await rein(p.dir, ['show', id], { env })
    expect(shown.stdout).toMatch(/══ \[compacted\] pruned \d+ tool result/)
  })

  it('keeps a long turn\'s request word for word after the summary, and rein show says so', async () => {
    const task = 'TASK-7: dump the files one by one, then say done'
    let dumps = 0
    let asked = false
    const longTurn = (request: RecordedRequest): MockReply => {
      if (isSummaryRequest(request)) return { steps: [{ text: '## Goal\nDump files.\n## Decisions\nNone.\n## Open tasks\nMore.\n## Notes\nNone.' }] }
      // Turn 1 ("hello") is answered at once; the task's turn calls dump twelve times.
      asked ||= (request.body as Wire).messages.some((message) => message.content === task)
      // No usage reported: the meter counts characters, as it does for a server that reports none.
      if (!asked) return { steps: [{ text: 'hi' }], usage: null }
      if (dumps++ >= 12) return { steps: [{ text: 'done' }], usage: null }
      return { steps: [{ toolCall: { id: `call_${dumps}`, name: 'dump', arguments: JSON.stringify({ path: `src/file-${dumps}.txt` }) } }], usage: null }
    }
    const p = await setUp(longTurn, { contextWindow: 4_000, agent: { compaction: { reserveTokens: 500, summaryMaxTokens: 256, target: 0.1 } } })
    const env = { REIN_HOME: p.home }
    const id = sessionIdOf(await rein(p.dir, ['run', 'hello'], { env }))
    const run = await rein(p.dir, ['run', '--session', id, task], { env })
    expect(run.code).toBe(0)
    expect(run.stderr).toContain('summarized the earlier conversation')
    const last = (p.server.requests.filter((request) => !isSummaryRequest(request)).at(-1)!.body as Wire).messages
    const summaryAt = last.findIndex((message) => String(message.content).includes('A summary of the conversation before this point'))
    expect(summaryAt).toBeGreaterThan(0)
    expect(last[summaryAt + 1]).toMatchObject({ role: 'user', content: task })
    const shown = await rein(p.dir, ['show', id], { env })
    expect(shown.stdout).toMatch(/summarized, the request at event \d+ kept word for word after it; the summary:/)
  })

  it('rein compact summarizes a stored session now, with what to keep, and the session goes on', async () => {
    const p = await setUp(script, { contextWindow: 4_000, agent: { compaction: { reserveTokens: 500, summaryMaxTokens: 256 } } })
    const env = { REIN_HOME: p.home }
    const id = sessionIdOf(await rein(p.dir, ['run', 'task 1'], { env }))
    for (let turn = 2; turn <= 3; turn++) await rein(p.dir, ['run', '--session', id, `task ${turn}`], { env })
    const compact = await rein(p.dir, ['compact', id, 'keep the file names'], { env })
    expect(compact.code).toBe(0)
    expect(compact.stderr).toMatch(new RegExp(`session ${id}: \\[compacted\\] .*summarized the earlier conversation`))
    const summary = p.server.requests.find(isSummaryRequest)!
    expect(JSON.stringify(summary.body)).toContain('keep the file names')
    expect((summary.body as { tools?: unknown }).tools).toBeUndefined()
    const shown = await rein(p.dir, ['show', id], { env })
    expect(shown.stdout).toContain('- read: src/file-0.txt')
    const next = await rein(p.dir, ['run', '--session', id, 'task 4'], { env })
    expect(next.code).toBe(0)
    const sent = p.server.requests.filter((request) => !isSummaryRequest(request)).at(-1)!
    expect(JSON.stringify(sent.body)).toContain('A summary of the conversation before this point')
  })

  it('rein compact says what its summary request spent, as a run says what its turn spent, in text and in --json', async () => {
    const p = await setUp(script, { contextWindow: 4_000, pricing: true, agent: { compaction: { reserveTokens: 500, summaryMaxTokens: 256 } } })
    const env = { REIN_HOME: p.home }
    const id = sessionIdOf(await rein(p.dir, ['run', 'task 1'], { env }))
    for (let turn = 2; turn <= 3; turn++) await rein(p.dir, ['run', '--session', id, `task ${turn}`], { env })
    const compact = await rein(p.dir, ['compact', id], { env })
    expect(compact.code).toBe(0)
    // The mock's usage for an answer that reports none: 12 in, 4 out, at 2 and 8 a million.
    expect(compact.stderr).toContain('the summary request: tokens in 12 out 4 · cost 0.000056\n')
    const again = await rein(p.dir, ['run', '--session', id, 'task 4'], { env })
    expect(again.code).toBe(0)
    const json = await rein(p.dir, ['compact', id, '--json'], { env })
    const compacted = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.type === 'compacted')
    expect(compacted).toMatchObject({ usage: { inputTokens: 12, outputTokens: 4 }, cost: 0.000056 })
  })

  it('rein compact says a summary request being retried, as a turn says its requests\' retries', async () => {
    let failures = 1
    const p = await setUp((request, index) => (isSummaryRequest(request) && failures-- > 0 ? { kind: 'error' as const, status: 500, message: 'summary server hiccup' } : script(request, index)), { contextWindow: 4_000, agent: { compaction: { reserveTokens: 500, summaryMaxTokens: 256 } } })
    const env = { REIN_HOME: p.home }
    const id = sessionIdOf(await rein(p.dir, ['run', 'task 1'], { env }))
    for (let turn = 2; turn <= 3; turn++) await rein(p.dir, ['run', '--session', id, `task ${turn}`], { env })
    const compact = await rein(p.dir, ['compact', id], { env })
    expect(compact.code).toBe(0)
    expect(compact.stderr).toMatch(/\[retry 1\] SERVER from mock; waiting \d+ ms/)
    expect(compact.stderr).toContain('summarized the earlier conversation')
  })

  it('says rein compact changed nothing, and why, when the summary request fails', async () => {
    let refuse = false
    const p = await setUp((request, index) => (refuse && isSummaryRequest(request) ? { kind: 'error' as const, status: 401, message: 'Incorrect API key provided', type: 'invalid_request_error' } : script(request, index)), { contextWindow: 4_000 })
    const env = { REIN_HOME: p.home }
    const id = sessionIdOf(await rein(p.dir, ['run', 'task 1'], { env }))
    await rein(p.dir, ['run', '--session', id, 'task 2'], { env })
    refuse = true
    const compact = await rein(p.dir, ['compact', id], { env })
    expect(compact.code).toBe(1)
    expect(compact.stderr).toContain(`session ${id}: not compacted: the summary failed (AUTH: `)
    expect(compact.stderr).not.toContain('[compacted]')
  })

  it('exits 130, as an interrupted turn does, when Ctrl-C stops rein compact mid-summary', async () => {
    let stall = false
    const p = await setUp((request, index) => (stall && isSummaryRequest(request) ? { steps: [{ text: '## Goal\npart' }, { stall: true }] } : script(request, index)), { contextWindow: 4_000 })
    const env = { REIN_HOME: p.home }
    const id = sessionIdOf(await rein(p.dir, ['run', 'task 1'], { env }))
    await rein(p.dir, ['run', '--session', id, 'task 2'], { env })
    stall = true
    let child: { kill(signal: NodeJS.Signals): boolean } | undefined
    const compacting = spawnRein(p.dir, ['compact', id], undefined, env, [], (spawned) => { child = spawned })
    await expect.poll(() => p.server.requests.some(isSummaryRequest), { timeout: 15_000 }).toBe(true)
    child?.kill('SIGINT')
    const compact = await compacting
    expect(compact.code).toBe(130)
    expect(compact.stderr).toContain('SIGINT: stopping the compaction (nothing of it is written until it completes)')
    expect(compact.stderr).not.toContain('turn')
    expect(compact.stderr).toContain(`session ${id}: the compaction was stopped before it finished and changed nothing`)
    expect(compact.stderr).not.toContain('rein: ')
  })

  it('closes a log a kill left mid-delegation, and the subagent it waited on, without continuing either', async () => {
    const delegating = (request: RecordedRequest): MockReply => {
      const messages = (request.body as Wire).messages
      const child = messages.some((message) => message.role === 'user' && message.content === 'child task')
      if (child) return { steps: [{ toolCall: { id: 'h1', name: 'hang', arguments: '{}' } }] }
      if (messages.at(-1)?.role === 'tool') return { steps: [{ text: 'never asked' }] }
      return { steps: [{ toolCall: { id: 'p1', name: 'subagent', arguments: JSON.stringify({ description: 'dig', prompt: 'child task' }) } }] }
    }
    const p = await setUp(delegating, { contextWindow: 4_000, extraRows: ["- id: jobs\n  name: '@rein/jobs'", "- id: subagents\n  name: '@rein/subagents'"] })
    const env = { REIN_HOME: p.home }
    const logs = () => readdirSync(join(p.home, 'sessions')).filter((file) => file.endsWith('.jsonl'))
    let child: { kill(signal: NodeJS.Signals): boolean } | undefined
    const running = spawnRein(p.dir, ['run', '--yes', 'go'], undefined, env, [], (spawned) => { child = spawned })
    // The child's call to hang is durable (its intent is written before the body starts): kill then.
    await expect.poll(() => logs().some((file) => readFileSync(join(p.home, 'sessions', file), 'utf8').includes('"type":"tool/call","time"') && readFileSync(join(p.home, 'sessions', file), 'utf8').includes('"callId":"h1"')), { timeout: 15_000 }).toBe(true)
    child?.kill('SIGKILL')
    const id = /session (\S+)/.exec((await running).stderr)?.[1] ?? ''
    const requests = p.server.requests.length
    await spawnRein(p.dir, ['compact', id], undefined, env)
    const listed = await rein(p.dir, ['sessions', '--json'], { env })
    const statuses = listed.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { status: string }).status)
    expect(statuses).toEqual(['interrupted', 'interrupted'])
    // Nothing was continued: no request but the summary's (if any).
    expect(p.server.requests.slice(requests).filter((request) => !isSummaryRequest(request))).toEqual([])
  })

  it('refuses to compact a session whose model has no known window, naming the fix', async () => {
    const p = await setUp(script)
    const env = { REIN_HOME: p.home }
    const id = sessionIdOf(await rein(p.dir, ['run', 'task 1'], { env }))
    const compact = await rein(p.dir, ['compact', id], { env })
    expect(compact.code).toBe(2)
    expect(compact.stderr).toContain('mock/mock-model has no known context window')
    expect(compact.stderr).toContain('contextWindow')
  })
})

describe('a kill during compaction', () => {
  it('leaves the history as it was: no compaction recorded, the log valid, the session usable', async () => {
    let summaryAsked: () => void = () => {}
    const stalling = (request: RecordedRequest, index: number): MockReply => {
      if (!isSummaryRequest(request)) return script(request, index)
      summaryAsked()
      // Part of a summary, then nothing: the process dies while it waits for the rest.
      return { steps: [{ text: '## Goal\nHalf' }, { stall: true }] }
    }
    const p = await setUp(stalling, { contextWindow: 4_000, agent: { compaction: { reserveTokens: 500, summaryMaxTokens: 256 } } })
    const env = { REIN_HOME: p.home }
    const id = sessionIdOf(await rein(p.dir, ['run', 'task 1'], { env }))
    for (let turn = 2; turn <= 3; turn++) await rein(p.dir, ['run', '--session', id, `task ${turn}`], { env })
    const log = () => readFileSync(join(p.home, 'sessions', readdirSync(join(p.home, 'sessions')).find((name) => name.endsWith('.jsonl'))!), 'utf8')
    const before = log()
    const killed = await spawnRein(p.dir, ['compact', id], undefined, env, [], (child) => { summaryAsked = () => child.kill('SIGKILL') })
    expect(killed.signal).toBe('SIGKILL')
    // Only the summary request's mark was added: bookkeeping the model never sees, by which the next run counts the request.
    const after = log()
    expect(after.startsWith(before)).toBe(true)
    expect(after.slice(before.length).trim().split('\n').map((line) => (JSON.parse(line) as { type: string }).type)).toEqual(['summary/start'])
    const next = await rein(p.dir, ['run', '--session', id, 'task 4'], { env })
    expect(next.code).toBe(0)
    const events = log().trim().split('\n').slice(1).map((line) => JSON.parse(line) as { seq: number; type: string; data: never; time: string })
    expect(validateSessionInvariants(events)).toEqual([])
    // The cut-off summary request is counted once: estimated, failed, with its own output budget.
    const cut = events.filter((event) => event.type === 'llm/attempt' && (event.data as { failure?: { code: string } }).failure?.code === 'ABORTED')
    expect(cut.map((event) => event.data)).toEqual([expect.objectContaining({ maxTokens: 256, usageEstimated: true, usage: expect.objectContaining({ outputTokens: 0 }) })])
  }, 60_000)
})

describe('a server that refuses a request as too long', () => {
  it('compacts and asks once more, and says why', async () => {
    // A server whose tokenizer counts far more than rein's meter: it refuses at a third of the window.
    const strict = (request: RecordedRequest, index: number): MockReply => {
      if (!isSummaryRequest(request) && JSON.stringify((request.body as Wire).messages).length > 6_000) return { kind: 'context-overflow', server: 'openai' }
      return script(request, index)
    }
    const p = await setUp(strict, { contextWindow: 16_000 })
    const env = { REIN_HOME: p.home }
    const id = sessionIdOf(await rein(p.dir, ['run', 'task 1'], { env }))
    let said = ''
    for (let turn = 2; turn <= 5; turn++) {
      const run = await rein(p.dir, ['run', '--session', id, `task ${turn}`], { env })
      expect(run.code).toBe(0)
      said += run.stderr
    }
    expect(said).toContain('(the provider had refused the request as too long)')
  })
})
