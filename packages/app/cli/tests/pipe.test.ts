/** `rein run "…" | head -1`: a reader that goes away ends the run quietly (issue #8 §4.1). */

import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { validateSessionInvariants, type MockStep } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { project, spawnRein, type Project } from './harness.ts'

let current: Project | undefined
afterEach(async () => {
  await current?.cleanup()
  current = undefined
})

describe('a closed stdout', () => {
  it('cancels the turn without a stack trace, keeps the session consistent and releases the lock', async () => {
    // The answer keeps coming after the first line, so rein writes to the closed pipe.
    const more: MockStep[] = Array.from({ length: 20 }, (_, i) => [{ delayMs: 100 }, { text: `more ${i}\n` }] as MockStep[]).flat()
    current = await project([{ steps: [{ text: 'first line\n' }, ...more] }])
    const sessions = join(current.home, 'sessions')
    const run = await spawnRein(current.dir, ['run', 'talk'], (text, _kill, child) => {
      if (text.includes('first line')) child.stdout.destroy()
    })
    expect(run.stderr).not.toMatch(/\n\s+at /)
    expect(run.stderr).not.toContain('EPIPE')
    expect(run.code).toBe(130)
    const files = readdirSync(sessions)
    expect(files.filter((file) => file.endsWith('.lock'))).toEqual([])
    const id = files.find((file) => file.endsWith('.jsonl'))!.replace(/\.jsonl$/, '')
    const events = (await new JsonlSessionStore({ root: sessions }).load(id)).events
    expect(validateSessionInvariants(events)).toEqual([])
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    expect(existsSync(join(sessions, `${id}.lock`))).toBe(false)
  })
})
