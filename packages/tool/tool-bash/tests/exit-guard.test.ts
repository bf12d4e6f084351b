// rein's own process ending while a command runs: the command is in its own session, so no
// terminal signal reaches it; the exit guard kills it and everything it started.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { livingWith, uniqueTag, waitFor } from './processes.ts'

const fixture = fileURLToPath(new URL('./fixtures/exit-while-running.ts', import.meta.url))
const repo = fileURLToPath(new URL('../../../../', import.meta.url))

describe('when rein exits while a command runs', () => {
  it('kills the command and its strays (&, setsid, nohup) on the way out', async () => {
    const tag = uniqueTag()
    await promisify(execFile)(process.execPath, ['--import', 'tsx', '--conditions=@rein/source', fixture, tag], { cwd: repo })
    // SIGKILL was sent before the process ended; the kernel finishes the job moments later.
    await waitFor(() => livingWith(tag).length === 0, `every process tagged ${tag} to end`)
    expect(livingWith(tag)).toEqual([])
  }, 30_000)
})
