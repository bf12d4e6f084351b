// untilIdle: what rein awaits that nothing can settle is given up once Node's event loop runs
// empty, instead of Node exiting 13 without a word — also a second such wait right after a first.
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const CHILD = fileURLToPath(new URL('./fixtures/idle-twice.ts', import.meta.url))

describe('untilIdle', () => {
  it('gives up a second wait that follows one it gave up, and the process ends normally', () => {
    const run = spawnSync(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', CHILD], { encoding: 'utf8' })
    expect({ code: run.status, stdout: run.stdout }).toEqual({ code: 0, stdout: 'first gave up\nsecond gave up\n' })
  })
})
