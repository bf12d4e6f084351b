// A name another process flips between a folder and a dangling link while calls resolve it: every
// call ends in a documented answer, never a raw system error from between two looks at the name.
import { join } from 'node:path'
import { startLinkFlipper } from '@rein/testkit'
import { describe, expect, it } from 'vitest'
import { boot, codeOf, text, useFolders } from './harness.ts'

const folders = useFolders()
const DOCUMENTED = new Set(['PATH_OUTSIDE_WORKSPACE', 'FILE_NOT_FOUND', 'NOT_A_REGULAR_FILE', 'READ_FAILED', 'WRITE_FAILED', 'FILE_CHANGED_SINCE_READ', 'FILE_NOT_READ'])

describe('a path whose folder flips to a dangling link and back', () => {
  it('answers each read and write with a documented code, never the readlink error of a link that stopped being one', async () => {
    const f = folders()
    const { call } = await boot(f)
    const flipper = await startLinkFlipper([{ path: join(f.workspace, 'flip'), linkTo: join(f.outside, 'missing'), real: { folder: { 'f.txt': 'content\n' } } }])
    const answers: string[] = []
    try {
      for (let n = 0; n < 150; n++) {
        for (const result of [await call('read', { path: 'flip/f.txt' }), await call('write', { path: `flip/new${n}.txt`, content: 'x' })]) {
          if (!result.isError) continue
          answers.push(`${codeOf(result)}: ${text(result)}`)
        }
      }
    } finally {
      await flipper.stop()
    }
    expect(answers.filter((answer) => /EINVAL|readlink/.test(answer) || !DOCUMENTED.has(answer.split(':')[0]!))).toEqual([])
  }, 60_000)
})
