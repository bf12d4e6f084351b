// The zombie is a real exited, unreaped process: /proc shows it as Z, signals reach nothing, and stop() ends it.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { isProcessAlive, readProcess } from '@rein/base'
import { startZombie } from '../src/index.ts'

describe('startZombie', () => {
  it('gives a pid /proc lists as a zombie until stopped, then none', { timeout: 30_000 }, async () => {
    const zombie = await startZombie()
    expect(readFileSync(`/proc/${zombie.pid}/status`, 'utf8')).toMatch(/^State:\s+Z/m)
    expect(readProcess(zombie.pid)).toBeUndefined()
    expect(isProcessAlive(zombie.pid)).toBe(false)
    await zombie.stop()
    await expect.poll(() => {
      try {
        readFileSync(`/proc/${zombie.pid}/status`)
        return 'listed'
      } catch {
        return 'gone'
      }
    }, { timeout: 20_000 }).toBe('gone')
  })
})
