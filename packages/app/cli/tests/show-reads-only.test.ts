// `rein show` never changes the session it shows: not the log (a torn tail stays), not the folder
// beside it, and not the lock (checkpoint marks are read without claiming the session).
import { spawn } from 'node:child_process'
import { appendFileSync, chmodSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { MockReply } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { answer, CHECKPOINT_ROWS } from './checkpoint-rows.ts'
import { projectPerTest, rein, sessionIdOf, type Project } from './harness.ts'

const setUp = projectPerTest(afterEach)

const write = (id: string, path: string): MockReply => ({ steps: [{ toolCall: { id, name: 'write', arguments: JSON.stringify({ path, content: 'one\n' }) } }] })

const TORN = '{"seq":999,"type":"note","partial line a person is still editing'

function sessionsOf(p: Project): string {
  return join(p.home, 'sessions')
}

describe('rein show reads only', () => {
  it('show leaves a torn last line in the log and creates no session folder', async () => {
    const p = await setUp([answer('text only')], { extraRows: CHECKPOINT_ROWS })
    const id = sessionIdOf(await rein(p.dir, ['run', '--yes', 'hi']))
    const log = join(sessionsOf(p), `${id}.jsonl`)
    rmSync(join(sessionsOf(p), `${id}.files`), { recursive: true, force: true })
    appendFileSync(log, TORN)
    const before = readFileSync(log)
    const show = await rein(p.dir, ['show', id])
    expect(show).toMatchObject({ code: 0, stderr: '' })
    expect(readFileSync(log).equals(before)).toBe(true)
    expect(existsSync(join(sessionsOf(p), `${id}.files`))).toBe(false)
  })

  it('resume says it cut an unfinished last line from the log, and how many bytes, rather than cutting it without a word', async () => {
    const p = await setUp([answer('text only'), answer('went on')])
    const id = sessionIdOf(await rein(p.dir, ['run', '--yes', 'hi']))
    const log = join(sessionsOf(p), `${id}.jsonl`)
    appendFileSync(log, TORN)
    const resume = await rein(p.dir, ['resume', id, 'go on'])
    expect(resume.code).toBe(0)
    expect(resume.stderr).toContain(`session ${id}: its log ended in ${Buffer.byteLength(TORN)} bytes of an unfinished line`)
    expect(readFileSync(log, 'utf8')).not.toContain('partial line')
  })

  it('rein show reads a checkpoint log it cannot write, and leaves its mode as it is', async () => {
    const p = await setUp([write('w1', 'a.txt'), answer('wrote a')], { extraRows: CHECKPOINT_ROWS })
    const id = sessionIdOf(await rein(p.dir, ['run', '--yes', 'make a']))
    const log = join(sessionsOf(p), `${id}.files`, 'checkpoints.jsonl')
    // Read-only for everyone: root would still open it for writing, and narrow its mode.
    chmodSync(log, 0o444)
    const show = await rein(p.dir, ['show', id])
    expect(show).toMatchObject({ code: 0, stderr: '' })
    expect(show.stdout).toContain('── turn 1  [checkpoint: 1 file]\n')
    expect(statSync(log).mode & 0o7777).toBe(0o444)
  })

  it('show marks checkpoints of a session another live process holds, without taking its lock', async () => {
    const p = await setUp([write('w1', 'a.txt'), answer('wrote a')], { extraRows: CHECKPOINT_ROWS })
    const id = sessionIdOf(await rein(p.dir, ['run', '--yes', 'make a']))
    const lock = join(sessionsOf(p), `${id}.lock`)
    const holder = spawn('sleep', ['30'])
    try {
      writeFileSync(lock, String(holder.pid))
      const show = await rein(p.dir, ['show', id])
      expect(show).toMatchObject({ code: 0, stderr: '' })
      expect(show.stdout).toContain('── turn 1  [checkpoint: 1 file]\n')
      expect(readFileSync(lock, 'utf8')).toBe(String(holder.pid))
    } finally {
      holder.kill()
    }
  })
})
