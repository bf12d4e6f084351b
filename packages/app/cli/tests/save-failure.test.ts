// A session that cannot be saved (the disk is full, or read-only) is told once, in a rein user's
// terms: what happened to the sessions folder and what to do, not the store's append/flush advice.
import { join } from 'node:path'
import type { MockReply } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { refuseMarkedWrites } from './fixtures/disk-refusal.ts'
import { chatTerminal, FIXTURES, projectPerTest, sessionIdOf, spawnRein } from './harness.ts'

const setUp = projectPerTest(afterEach)

const FILLING: MockReply[] = [{ steps: [{ text: 'FILL-THE-DISK' }] }]

async function runOnFullDisk(errno: string) {
  const p = await setUp(FILLING)
  const run = await spawnRein(p.dir, ['run', 'hi'], undefined, { FULL_DISK_ERRNO: errno }, ['--import', join(FIXTURES, 'full-disk.ts')])
  return { p, run, id: sessionIdOf(run), sessions: join(p.home, 'sessions') }
}

describe('a session that cannot be saved', () => {
  it('a full disk is told once as no space on the disk holding the sessions folder, and to free space then rein resume', async () => {
    const { run, id, sessions } = await runOnFullDisk('ENOSPC')
    expect(run.code).toBe(1)
    const told = run.stderr.split('\n').filter((line) => line.includes('could not be saved'))
    expect(told).toEqual([expect.stringContaining(`no space left on the disk holding ${sessions}; free space, then rein resume ${id}`)])
    expect(run.stderr).not.toMatch(/append them again|flush again|from seq/)
  })

  it('a read-only disk is told once as a read-only sessions folder, without store advice', async () => {
    const { run, id, sessions } = await runOnFullDisk('EROFS')
    expect(run.code).toBe(1)
    const told = run.stderr.split('\n').filter((line) => line.includes('could not be saved'))
    expect(told).toEqual([expect.stringContaining(`the sessions folder ${sessions} is read-only`)])
    expect(told[0]).toContain(`rein resume ${id}`)
    expect(run.stderr).not.toMatch(/append them again|flush again|from seq/)
  })

  it('rein chat tells a turn it could not save in the same words as rein run, once, without store advice', async () => {
    const p = await setUp(FILLING)
    const restore = refuseMarkedWrites('ENOSPC')
    try {
      const chat = chatTerminal(p.dir)
      await expect.poll(chat.screen).toContain('> ')
      const id = /session (\S+) · /.exec(chat.screen())?.[1]
      chat.type('hi\r')
      await expect.poll(chat.screen).toContain('could not be saved')
      chat.type('\u0004')
      expect(await chat.done).toBe(1)
      const told = chat.screen().split('\n').filter((line) => line.includes('could not be saved'))
      expect(told).toEqual([expect.stringContaining(`no space left on the disk holding ${join(p.home, 'sessions')}; free space, then rein resume ${String(id)}`)])
      expect(chat.screen()).not.toMatch(/append them again|flush again|from seq/)
    } finally {
      restore()
    }
  })

  it('rein chat says a /compact it could not save in the disk\'s terms, not the store\'s', async () => {
    const answers = ['one', 'two', 'three'].map((text) => ({ steps: [{ text }] }))
    const p = await setUp([...answers, { steps: [{ text: '## Goal\nFILL-THE-DISK' }] }], { contextWindow: 100_000 })
    const restore = refuseMarkedWrites('ENOSPC')
    try {
      const chat = chatTerminal(p.dir)
      await expect.poll(chat.screen).toContain('> ')
      // Long enough that a summary of the first two is shorter than they are.
      for (const [line, reply] of [['a', 'one'], ['b', 'two'], ['c', 'three']] as const) await chat.turn(`${line} ${'words '.repeat(200)}`, reply)
      chat.type('/compact\r')
      await expect.poll(chat.screen).toContain('/compact failed')
      chat.type('\u0004')
      await chat.done
      expect(chat.screen()).not.toMatch(/append them again|flush again|from seq/)
      const told = chat.screen().split('\n').filter((line) => line.includes('could not be saved'))
      expect(told).toEqual([expect.stringMatching(new RegExp(`^/compact failed: .*no space left on the disk holding ${join(p.home, 'sessions')}`))])
    } finally {
      restore()
    }
  }, 20_000)
})
