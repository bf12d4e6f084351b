// `rein run --session` of a session a crash left mid-turn, on the built-in composition: the repair
// is said first, then the advice about compaction, right before the turn, as `rein resume` says them.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, spawnRein } from './harness.ts'

const setUp = projectPerTest(afterEach)
const time = '2026-12-01T00:00:00.000Z'

describe('rein run --session of a session that needs repair', () => {
  it('says the compaction advice after the repair lines, not before them', async () => {
    const p = await setUp([{ steps: [{ text: 'carried on' }] }])
    const store = new JsonlSessionStore({ root: join(p.home, 'sessions') })
    await store.create({ formatVersion: 1, id: 'cut-short', createdAt: time, cwd: p.dir, depth: 0 })
    await store.append('cut-short', [
      { seq: 0, type: 'turn/start', time, data: { turn: 1 } },
      { seq: 1, type: 'user/message', time, data: { message: { id: 'u1', role: 'user', content: [{ type: 'text', text: 'go' }], source: { kind: 'user' } } } },
      { seq: 2, type: 'step/start', time, data: { turn: 1, step: 1 } },
    ])
    await store.close('cut-short')
    // No cordis.yml in this folder: the built-in composition, which knows no window for this model.
    const empty = join(p.dir, 'empty')
    mkdirSync(empty)
    const env = { OPENAI_BASE_URL: p.server.url, OPENAI_API_KEY: '', DEEPSEEK_API_KEY: '', REIN_MODEL: 'mystery-model', REIN_HOME: p.home }
    const run = await spawnRein(empty, ['run', '--session', 'cut-short', 'go on'], undefined, env)
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('carried on\n')
    const repair = run.stderr.indexOf('session cut-short had stopped mid-turn')
    const advice = run.stderr.indexOf('compaction is off for openai/mystery-model')
    expect(repair).toBeGreaterThanOrEqual(0)
    expect(advice).toBeGreaterThan(repair)
    expect(run.stderr.indexOf('session cut-short\n')).toBeGreaterThan(advice)
  }, 60_000)
})
