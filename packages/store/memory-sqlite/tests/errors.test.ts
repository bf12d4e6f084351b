import { describe, expect, it } from 'vitest'
import { toStoreError } from '../src/errors.ts'

const failure = (code: string, message: string) => Object.assign(new Error(message), { code })

describe('what a failure tells the person running rein', () => {
  it.each([
    ['SQLITE_FULL', 'database or disk is full'],
    ['SQLITE_IOERR_SHMSIZE', 'disk I/O error'],
    ['ENOSPC', 'no space left on device'],
  ])('a full disk (%s) says to free space on the disk holding the file', (code, message) => {
    const error = toStoreError(failure(code, message), '/home/me/.rein/memory.db', 'writing it', 5000)
    expect(error).toMatchObject({ code: 'MEMORY_STORE_FAILED' })
    expect(error.message).toContain('free space on the disk holding /home/me/.rein/memory.db')
  })

  it('a failure it has no advice for says only what failed', () => {
    const error = toStoreError(failure('SQLITE_ERROR', 'something odd'), '/tmp/memory.db', 'reading it', 5000)
    expect(error.message).toBe('memory database /tmp/memory.db: reading it failed: something odd')
  })
})
