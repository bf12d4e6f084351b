// Unloading the jobs plugin while background commands run, in a process of its own: every process
// of every job is gone when dispose returns, and nothing is left holding Node open (no timer, no
// child, no pipe), neither then nor once the whole stack is torn down.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { livingWith, uniqueTag } from './processes.ts'

const fixture = fileURLToPath(new URL('./fixtures/dispose-with-jobs.ts', import.meta.url))
const repo = fileURLToPath(new URL('../../../../', import.meta.url))

describe('disposing the jobs plugin while jobs run', () => {
  it('leaves no process, timer, child or pipe behind', async () => {
    const tag = uniqueTag()
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--conditions=@rein/source', fixture, tag], { cwd: repo })
    const held = JSON.parse(stdout) as { living: number; before: string[]; afterJobs: string[]; afterAll: string[] }
    expect(held.living).toBe(0)
    // An fs request (a log or file being saved) may still be on its way; nothing that waits or runs.
    const waiting = (kinds: string[]) => kinds.filter((kind) => /Timeout|Immediate|Process|Pipe|TCP|Signal/.test(kind))
    expect(waiting(held.afterJobs)).toEqual(waiting(held.before))
    expect(held.afterAll).toEqual(held.before)
    expect(livingWith(tag)).toEqual([])
  }, 30_000)
})
