import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hasEnvironmentEntry, isProcessAlive, isZombie, leftByGoneProcesses, listProcesses, readProcess, removeLeftByGoneProcesses } from '../src/index.ts'

const children: ChildProcess[] = []
const holders: ChildProcess[] = []
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL')
  // A zombie's holder reaps it on SIGTERM: PID 1 in a container may reap nothing.
  await Promise.all(holders.splice(0).map((holder) => new Promise((resolve) => {
    holder.once('exit', resolve)
    if (holder.exitCode !== null || holder.signalCode !== null || !holder.kill('SIGTERM')) resolve(undefined)
  })))
})

function start(command: string, env: NodeJS.ProcessEnv = {}) {
  return track(spawn('bash', ['-c', command], { stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, ...env }, detached: true }))
}

function track(child: ChildProcess) {
  children.push(child)
  return child
}

/**
 * A zombie held by a parent that reaps it only on SIGTERM. Perl installs no SIGCHLD handler; bash does, and
 * reaped its child before `exec sleep` on a loaded machine (2 in 100 under six busy loops). The
 * testkit's startZombie does the same; base is below the testkit, so its tests cannot import it.
 */
async function startZombie() {
  const holder = spawn('perl', ['-e', '$| = 1; my $pid = fork // die "fork: $!"; exit 0 unless $pid; $SIG{TERM} = sub { waitpid($pid, 0); exit 0 }; print "$pid\\n"; sleep 30'], { stdio: ['ignore', 'pipe', 'inherit'] })
  holders.push(holder)
  const zombie = Number(await new Promise<string>((resolve) => holder.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString()))))
  await expect.poll(() => isZombie(zombie)).toBe(true)
  return { holder, zombie }
}

describe('the process table', { timeout: 20_000 }, () => {
  it('lists a live process with its parent and group, and finds an exact environment entry', () => {
    const child = start('exec sleep 30', { REIN_TABLE_TEST: 'marker-1' })
    const entry = listProcesses()?.find((process) => process.pid === child.pid)
    expect(entry).toMatchObject({ pid: child.pid, ppid: process.pid, group: child.pid })
    expect(hasEnvironmentEntry(child.pid!, 'REIN_TABLE_TEST=marker-1')).toBe(true)
    expect(hasEnvironmentEntry(child.pid!, 'REIN_TABLE_TEST=marker')).toBe(false)
    expect(listProcesses('/nonexistent')).toBeUndefined()
  })

  it('counts a zombie as no live process', async () => {
    const { holder, zombie } = await startZombie()
    expect(readProcess(zombie)).toBeUndefined()
    expect(readProcess(holder.pid!)).toBeDefined()
  })

  it('counts this process, a child and another user\'s process as alive; an exited one and a zombie as gone', async () => {
    const child = start('exec sleep 30')
    expect(isProcessAlive(process.pid)).toBe(true)
    expect(isProcessAlive(child.pid!)).toBe(true)
    expect(isProcessAlive(1)).toBe(true) // init: signalling it may be refused, it still runs
    expect(isProcessAlive(spawnSync('true').pid)).toBe(false)
    const { zombie } = await startZombie()
    expect(isProcessAlive(zombie)).toBe(false)
  })

  it('picks out only the temporary names of gone processes, never this one\'s, a live one\'s or a name it does not own', async () => {
    const live = start('exec sleep 30').pid!
    const dead = spawnSync('true').pid
    const names = [`t.${dead}`, `t.${live}`, `t.${process.pid}`, 't.0', 't.-4', 't.1.5', 'other', `t.${Number.MAX_SAFE_INTEGER + 2}`]
    const writerOf = (name: string) => (name.startsWith('t.') ? Number(name.slice(2)) : undefined)
    expect(leftByGoneProcesses(names, writerOf)).toEqual([`t.${dead}`])
  })

  it('removes from a folder only the temporary files of gone processes; a folder that cannot be listed is left', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'rein-base-leftovers-'))
    const dead = spawnSync('true').pid
    for (const name of [`t.${dead}`, `t.${process.pid}`, 'other']) writeFileSync(join(folder, name), 'x')
    const writerOf = (name: string) => (name.startsWith('t.') ? Number(name.slice(2)) : undefined)
    await removeLeftByGoneProcesses(folder, writerOf)
    expect(readdirSync(folder).sort()).toEqual(['other', `t.${process.pid}`])
    await expect(removeLeftByGoneProcesses(join(folder, 'missing'), writerOf)).resolves.toBeUndefined()
    rmSync(folder, { recursive: true, force: true })
  })
})
