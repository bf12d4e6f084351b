import { spawn, type ChildProcess } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { hasEnvironmentEntry, isZombie, listProcesses, readProcess } from '../src/index.ts'

const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
})

function start(command: string, env: NodeJS.ProcessEnv = {}) {
  const child = spawn('bash', ['-c', command], { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, ...env }, detached: true })
  children.push(child)
  return child
}

describe('the process table', () => {
  it('lists a live process with its parent and group, and finds an exact environment entry', () => {
    const child = start('exec sleep 30', { REIN_TABLE_TEST: 'marker-1' })
    const entry = listProcesses()?.find((process) => process.pid === child.pid)
    expect(entry).toMatchObject({ pid: child.pid, ppid: process.pid, group: child.pid })
    expect(hasEnvironmentEntry(child.pid!, 'REIN_TABLE_TEST=marker-1')).toBe(true)
    expect(hasEnvironmentEntry(child.pid!, 'REIN_TABLE_TEST=marker')).toBe(false)
    expect(listProcesses('/nonexistent')).toBeUndefined()
  })

  it('counts a zombie as no live process', async () => {
    // bash starts a child that exits at once, then becomes a sleep that never waits for it.
    const holder = start('sleep 0 & echo $!; exec sleep 30')
    const zombie = Number(await new Promise<string>((resolve) => holder.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString()))))
    await expect.poll(() => isZombie(zombie)).toBe(true)
    expect(readProcess(zombie)).toBeUndefined()
    expect(readProcess(holder.pid!)).toBeDefined()
  })
})
