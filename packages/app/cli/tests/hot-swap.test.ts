/**
 * The real stack from a real cordis.yml, embedded: every row edited mid-session keeps the session
 * going, and disposing the composition mid-stream records the turn as interrupted (issue #8 §3).
 */

import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadComposition, type Composition } from '@rein/compose'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { validateSessionInvariants, type MockReply } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { project, spawnRein, type Project } from './harness.ts'

let current: Project | undefined
let composition: Composition | undefined
afterEach(async () => {
  await composition?.dispose()
  composition = undefined
  await current?.cleanup()
  current = undefined
})

const answer = (text: string): MockReply => ({ steps: [{ text }] })

/** Rewrites one line of the project's cordis.yml. */
function edit(p: Project, from: string, to: string) {
  const file = join(p.dir, 'cordis.yml')
  const text = readFileSync(file, 'utf8')
  expect(text).toContain(from)
  writeFileSync(file, text.replace(from, to))
}

async function events(p: Project, id: string) {
  return (await new JsonlSessionStore({ root: join(p.home, 'sessions') }).load(id)).events
}

describe('a row edited mid-session', () => {
  it('applies each edit at the next turn and keeps one valid log', async () => {
    const p = current = await project((_request, index) => answer(`turn ${index + 1}`))
    composition = await loadComposition({ file: join(p.dir, 'cordis.yml') })
    const agent = await composition.ctx.agents.create({ cwd: p.dir })
    expect(await agent.send('start')).toMatchObject({ reason: 'completed', text: 'turn 1' })
    const { ctx } = composition
    const edits: [string, string, () => unknown, unknown][] = [
      ['maxRetries: 1,', 'maxRetries: 0,', () => ctx.llm.config.retry.maxRetries, 0],
      ['label: mock,', 'label: mock-edited,', () => ctx.llm.endpoint('mock')?.label, 'mock-edited'],
      ["- id: tools\n  name: '@rein/tools'", "- id: tools\n  name: '@rein/tools'\n  config: { defaultTimeoutMs: 60000 }", () => ctx.tools.config.defaultTimeoutMs, 60_000],
      [`config: { root: '${join(p.home, 'sessions')}' }`, `config: { root: '${join(p.home, 'sessions')}', batchDelayMs: 1 }`, () => agent.session.closed, true],
      ['"model":"mock-model"', '"model":"mock-model","maxSteps":20', async () => (await ctx.agents.create({ cwd: p.dir })).options.maxSteps, 20],
    ]
    for (const [index, [from, to, effect, expected]] of edits.entries()) {
      edit(p, from, to)
      await composition.reload()
      // The edit took effect (the swapped store closed the agent's session, to be reopened next turn)…
      expect(await effect()).toBe(expected)
      // …and the conversation goes on.
      expect(await agent.send(`after edit ${index + 1}`)).toMatchObject({ reason: 'completed', text: `turn ${index + 2}` })
    }
    await agent.close()
    const log = await events(p, agent.session.id)
    expect(validateSessionInvariants(log)).toEqual([])
    expect(log.filter((event) => event.type === 'turn/end').map((event) => (event.data as { reason: string }).reason)).toEqual(Array(6).fill('completed'))
  })
})

describe('disposing the composition mid-stream', () => {
  it('interrupts the turn, records it, and releases the lock', async () => {
    const p = current = await project([{ steps: [{ text: 'Working' }, { stall: true }] }])
    composition = await loadComposition({ file: join(p.dir, 'cordis.yml') })
    const agent = await composition.ctx.agents.create({ cwd: p.dir })
    let streaming!: () => void
    const started = new Promise<void>((resolve) => { streaming = resolve })
    agent.subscribe((event) => { if (event.type === 'text-delta') streaming() })
    const running = agent.send('go')
    await started
    await composition.dispose()
    composition = undefined
    expect(await running).toMatchObject({ reason: 'interrupted' })
    const log = await events(p, agent.session.id)
    expect(validateSessionInvariants(log)).toEqual([])
    expect(log.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'interrupted' } })
    expect(existsSync(join(p.home, 'sessions', `${agent.session.id}.lock`))).toBe(false)
  })
})

describe('a tool that never settles', () => {
  it('ends as TOOL_TIMEOUT after the registry\'s default timeout, in a real process', async () => {
    const p = current = await project([
      { steps: [{ toolCall: { id: 'h1', name: 'hang', arguments: '{}' } }] },
      answer('the tool timed out'),
    ])
    edit(p, "- id: tools\n  name: '@rein/tools'", "- id: tools\n  name: '@rein/tools'\n  config: { defaultTimeoutMs: 300 }")
    const run = await spawnRein(p.dir, ['run', 'hang please'])
    expect(run.stderr).toContain('[tool] hang {} failed TOOL_TIMEOUT')
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('the tool timed out')
  })
})
