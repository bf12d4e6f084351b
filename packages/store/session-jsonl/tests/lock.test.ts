import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { link, mkdir, readdir, readFile, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { startZombie, type Zombie } from '@rein/testkit'
import { JsonlSessionStore } from '../src/index.ts'
import { LockOwner } from '../src/lock.ts'
import { header, range } from './fixtures/sessions.ts'
import { tempRoot } from './temp-root.ts'

const children: ChildProcess[] = []
const zombies: Zombie[] = []

afterEach(async () => {
  for (const child of children.splice(0)) child.kill()
  await Promise.all(zombies.splice(0).map((zombie) => zombie.stop()))
})

async function storedSession(root: string, id = 's1') {
  const store = new JsonlSessionStore({ root })
  await store.create(header(id))
  await store.append(id, range(0, 1))
  await store.dispose()
}

describe('session locks', () => {
  it('holds the pid in the lock file from create until close', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    expect(await readFile(join(root, 's1.lock'), 'utf8')).toBe(`${process.pid}\n`)
    await store.append('s1', range(0, 1))
    await store.close('s1')
    await expect(stat(join(root, 's1.lock'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('refuses a second writer in this process, and lets it in after close', async () => {
    const root = await tempRoot()
    await storedSession(root)
    const first = new JsonlSessionStore({ root })
    const second = new JsonlSessionStore({ root })
    await first.open('s1')
    await expect(second.open('s1')).rejects.toMatchObject({ code: 'SESSION_LOCKED', details: { pid: process.pid } })
    await expect(first.open('s1')).rejects.toMatchObject({ code: 'SESSION_LOCKED', details: { pid: process.pid } })
    await first.close('s1')
    expect((await second.open('s1')).events).toEqual(range(0, 1))
    await second.close('s1')
  })

  it('refuses a session locked by another live process, naming its pid', async () => {
    const root = await tempRoot()
    await storedSession(root)
    const sleeper = spawn('sleep', ['30'])
    children.push(sleeper)
    const pid = sleeper.pid!
    await writeFile(join(root, 's1.lock'), `${pid}\n`)
    const store = new JsonlSessionStore({ root })
    const error = await store.open('s1').catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'SESSION_LOCKED', details: { pid } })
    // Named once, not as "process N (pid N)".
    expect((error as Error).message).toContain(`session s1 is open in process ${pid}; close it there first`)
    expect((error as Error).message).not.toContain('(pid ')
    expect(await readFile(join(root, 's1.lock'), 'utf8')).toBe(`${pid}\n`)
  })

  it('says a lock file it cannot use once, with its advice once', () => {
    // The pid file goes in a "folder" that is a file: its write fails (ENOTDIR) before any link.
    const notAFolder = fileURLToPath(import.meta.url)
    const error = (() => {
      try {
        new LockOwner(notAFolder).claim(join(notAFolder, 's1.lock'), 's1')
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toMatchObject({ code: 'SESSION_IO_FAILED', cause: { code: 'ENOTDIR' } })
    const message = (error as Error).message
    expect(message.split('cannot use the lock file')).toHaveLength(2)
    expect(message.split('check the sessions folder')).toHaveLength(2)
  })

  it('refuses create while another live process holds the id', async () => {
    const root = await tempRoot()
    const sleeper = spawn('sleep', ['30'])
    children.push(sleeper)
    await writeFile(join(root, 's1.lock'), `${sleeper.pid!}\n`)
    await expect(new JsonlSessionStore({ root }).create(header('s1'))).rejects.toMatchObject({ code: 'SESSION_LOCKED', details: { pid: sleeper.pid! } })
  })

  it('takes over a lock whose process is gone', async () => {
    const root = await tempRoot()
    await storedSession(root)
    const dead = spawnSync('true').pid
    await writeFile(join(root, 's1.lock'), `${dead}\n`)
    const store = new JsonlSessionStore({ root })
    expect((await store.open('s1')).events).toEqual(range(0, 1))
    expect(await readFile(join(root, 's1.lock'), 'utf8')).toBe(`${process.pid}\n`)
    await store.close('s1')
  })

  it('takes over a lock that names this very pid but no store here holds (a restarted container where rein got its old pid), and sweeps that run\'s pid file', async () => {
    const root = await tempRoot()
    await storedSession(root)
    // What the earlier run with this pid left: its pid file and, linked to it, the session's lock.
    const earlier = join(root, `.owner.lock.${process.pid}.${randomUUID()}.tmp`)
    await writeFile(earlier, `${process.pid}\n`)
    await link(earlier, join(root, 's1.lock'))
    const store = new JsonlSessionStore({ root })
    expect((await store.open('s1')).events).toEqual(range(0, 1))
    // A second claim in this process is still refused: that lock is this store's.
    const second = new JsonlSessionStore({ root })
    await expect(second.open('s1')).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
    await second.dispose()
    await store.dispose()
    expect(await readdir(root)).toEqual(['s1.jsonl'])
  })

  it('keeps another store\'s session in this process locked when that store names the folder through a link', async () => {
    const root = await tempRoot()
    await storedSession(root, 's1')
    await storedSession(root, 's2')
    const linked = join(await tempRoot(), 'sessions')
    await symlink(root, linked)
    const first = new JsonlSessionStore({ root })
    await first.open('s1')
    const second = new JsonlSessionStore({ root: linked })
    await second.open('s2')
    await expect(second.open('s1')).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
    expect(await readFile(join(root, 's1.lock'), 'utf8')).toBe(`${process.pid}\n`)
    await second.dispose()
    await first.dispose()
  })

  it('takes over a lock whose process was killed but not yet reaped (a zombie)', async () => {
    const root = await tempRoot()
    await storedSession(root)
    const zombie = await startZombie()
    zombies.push(zombie)
    await writeFile(join(root, 's1.lock'), `${zombie.pid}\n`)
    const store = new JsonlSessionStore({ root })
    expect((await store.open('s1')).events).toEqual(range(0, 1))
    await store.close('s1')
  })

  it('leaves no temporary pid file behind when a claimer was killed before linking it into place', async () => {
    const root = await tempRoot()
    await storedSession(root)
    // What a rein SIGKILLed inside the claim leaves: its pid file, written but never linked (or
    // linked and not yet removed), for this session and for one whose log was never published.
    const dead = spawnSync('true').pid
    await writeFile(join(root, `.s1.lock.${dead}.${randomUUID()}.tmp`), `${dead}\n`)
    await writeFile(join(root, `.s2.lock.${dead}.${randomUUID()}.tmp`), `${dead}\n`)
    const store = new JsonlSessionStore({ root })
    await store.open('s1')
    await store.dispose()
    expect(await readdir(root)).toEqual(['s1.jsonl'])
  })

  it('leaves no temporary log or summaries file behind when a process was killed while publishing its log or saving a list', async () => {
    const root = await tempRoot()
    await storedSession(root)
    // publishFile writes the first batch to this, links it into place, then removes it: a SIGKILL
    // between the write and the removal leaves it.
    const dead = spawnSync('true').pid
    await writeFile(join(root, `.s2.jsonl.${dead}.${randomUUID()}.tmp`), '{"type":"header"}\n')
    // And one killed while saving what it listed (summary-cache.ts).
    await writeFile(join(root, `.summaries.json.${dead}.${randomUUID()}.tmp`), '{"version":')
    const store = new JsonlSessionStore({ root })
    await store.open('s1')
    await store.dispose()
    expect(await readdir(root)).toEqual(['s1.jsonl'])
  })

  it('leaves the temporary pid file of a claimer that is still alive', async () => {
    const root = await tempRoot()
    await storedSession(root)
    const sleeper = spawn('sleep', ['30'])
    children.push(sleeper)
    const temp = `.s2.lock.${sleeper.pid!}.${randomUUID()}.tmp`
    await writeFile(join(root, temp), `${sleeper.pid!}\n`)
    const store = new JsonlSessionStore({ root })
    await store.open('s1')
    await store.dispose()
    expect((await readdir(root)).sort()).toEqual([temp, 's1.jsonl'])
  })

  it('leaves no lock behind for a session whose process was killed before its log was first written', async () => {
    const root = await tempRoot()
    await storedSession(root)
    // create() claims the id; the log appears with the first flush. A SIGKILL in between leaves this.
    const dead = spawnSync('true').pid
    await writeFile(join(root, 'never-written.lock'), `${dead}\n`)
    const store = new JsonlSessionStore({ root })
    await store.open('s1')
    await store.dispose()
    expect(await readdir(root)).toEqual(['s1.jsonl'])
  })

  it('is not held up by a FIFO named like a lock: the sweep and the list wait for no writer', async () => {
    const root = await tempRoot()
    await storedSession(root, 'other')
    spawnSync('mkfifo', [join(root, 'stray.lock')])
    spawnSync('mkfifo', [join(root, 'other.lock')])
    const script = fileURLToPath(new URL('fixtures/claim-and-list.ts', import.meta.url))
    // In a child process: before the fix its first claim blocked the event loop for good; the guard ends it.
    const child = spawnSync(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', script, root], { encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' })
    expect({ status: child.status, stdout: child.stdout }).toEqual({ status: 0, stdout: expect.stringContaining('done') })
    expect(child.stdout).toContain('other empty')
  })

  it('takes over a link named like a lock (rein never makes one), removing the link and leaving what it points to', async () => {
    const root = await tempRoot()
    await storedSession(root, 's1')
    await storedSession(root, 's2')
    const sleeper = spawn('sleep', ['30'])
    children.push(sleeper)
    const elsewhere = join(await tempRoot(), 'pid')
    await writeFile(elsewhere, `${sleeper.pid!}\n`)
    await symlink(elsewhere, join(root, 's1.lock'))
    await symlink(join(root, 'nowhere'), join(root, 's2.lock'))
    const store = new JsonlSessionStore({ root })
    expect((await store.list()).map((summary) => summary.status)).toEqual(['empty', 'empty'])
    for (const id of ['s1', 's2']) expect((await store.open(id)).events).toEqual(range(0, 1))
    await store.dispose()
    expect((await readdir(root)).sort()).toEqual(['.summaries.json', 's1.jsonl', 's2.jsonl'])
    expect(await readFile(elsewhere, 'utf8')).toBe(`${sleeper.pid!}\n`)
  })

  it('does not read a lock that is a link to a device without end: the sweep and the list finish', async () => {
    const root = await tempRoot()
    await storedSession(root, 'other')
    await symlink('/dev/zero', join(root, 'stray.lock'))
    await symlink('/dev/zero', join(root, 'other.lock'))
    const script = fileURLToPath(new URL('fixtures/claim-and-list.ts', import.meta.url))
    // In a child process: before the fix it read /dev/zero until memory ran out; the guard ends it.
    const child = spawnSync(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', script, root], { encoding: 'utf8', timeout: 20_000, killSignal: 'SIGKILL' })
    expect({ status: child.status, stdout: child.stdout }).toEqual({ status: 0, stdout: expect.stringContaining('done') })
    expect(child.stdout).toContain('other empty')
    expect((await readdir(root)).sort()).toEqual(['.summaries.json', 'other.jsonl', 's1.jsonl'])
  })

  it('says a folder named like a lock is a folder to move away, not a matter of permissions or free space', async () => {
    const root = await tempRoot()
    await storedSession(root, 's1')
    await mkdir(join(root, 's1.lock'))
    const error = await new JsonlSessionStore({ root }).open('s1').catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'SESSION_IO_FAILED', details: { lock: join(root, 's1.lock') } })
    expect((error as Error).message).toContain(`a folder stands where a session's lock goes (${join(root, 's1.lock')}); move it away`)
    expect((error as Error).message).not.toMatch(/permissions and free space/)
  })

  it('leaves no stale lock behind for a finished session that no one opens again', async () => {
    const root = await tempRoot()
    await storedSession(root, 's1')
    await storedSession(root, 'child')
    // A subagent's session whose process was killed after its last turn was saved: its parent reads
    // the finished log and never opens it, so no claim of its own takes the lock over.
    const dead = spawnSync('true').pid
    await writeFile(join(root, 'child.lock'), `${dead}\n`)
    const store = new JsonlSessionStore({ root })
    await store.open('s1')
    await store.dispose()
    expect((await readdir(root)).sort()).toEqual(['child.jsonl', 's1.jsonl'])
  })

  it('keeps the locks of live processes: a session open elsewhere, one created and not written yet', async () => {
    const root = await tempRoot()
    await storedSession(root, 's1')
    await storedSession(root, 's2')
    const sleeper = spawn('sleep', ['30'])
    children.push(sleeper)
    await writeFile(join(root, 's2.lock'), `${sleeper.pid!}\n`)
    await writeFile(join(root, 's3.lock'), `${sleeper.pid!}\n`)
    const store = new JsonlSessionStore({ root })
    await store.open('s1')
    await store.dispose()
    expect((await readdir(root)).sort()).toEqual(['s1.jsonl', 's2.jsonl', 's2.lock', 's3.lock'])
  })

  it('reads a locked session without claiming it', async () => {
    const root = await tempRoot()
    await storedSession(root)
    const writer = new JsonlSessionStore({ root })
    await writer.open('s1')
    expect((await new JsonlSessionStore({ root }).load('s1')).events).toEqual(range(0, 1))
    await writer.close('s1')
  })
})

describe('a store\'s pid file', () => {
  const pidFiles = async (root: string) => (await readdir(root)).filter((name) => name.startsWith('.owner.lock.'))

  it('is what every lock the store holds links to, so a claim makes no file, and dispose removes it', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.create(header('s2'))
    const [pidFile, ...more] = await pidFiles(root)
    expect(more).toEqual([])
    const [s1, s2, owner] = await Promise.all(['s1.lock', 's2.lock', pidFile!].map((name) => stat(join(root, name))))
    expect([s1!.ino, s2!.ino]).toEqual([owner!.ino, owner!.ino])
    expect(owner!.nlink).toBe(3)
    expect(await readFile(join(root, pidFile!), 'utf8')).toBe(`${process.pid}\n`)
    await store.close('s1')
    expect((await stat(join(root, pidFile!))).nlink).toBe(2)
    await store.dispose()
    expect(await readdir(root)).toEqual([])
  })

  it('is swept with the locks of a store killed with SIGKILL when another store claims a session there', async () => {
    const root = await tempRoot()
    const script = fileURLToPath(new URL('fixtures/hold-sessions.ts', import.meta.url))
    const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', script, root], { stdio: ['ignore', 'pipe', 'inherit'] })
    children.push(child)
    await new Promise<void>((resolve) => child.stdout!.on('data', (chunk: Buffer) => { if (chunk.toString().includes('held')) resolve() }))
    expect((await readdir(root)).sort()).toEqual([expect.stringMatching(`^\\.owner\\.lock\\.${child.pid!}\\.`), 's1.jsonl', 's1.lock', 's2.jsonl', 's2.lock'])
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
    const store = new JsonlSessionStore({ root })
    expect((await store.open('s1')).events).toEqual(range(0, 1))
    await store.dispose()
    expect((await readdir(root)).sort()).toEqual(['s1.jsonl', 's2.jsonl'])
  })

  it('leaves no half-written pid file behind when it cannot be written (a full disk)', async () => {
    const root = await tempRoot()
    const script = fileURLToPath(new URL('fixtures/claim-past-limit.ts', import.meta.url))
    // ulimit -f 0: the file is created, and its first write fails with EFBIG (Node ignores SIGXFSZ).
    const child = spawnSync('sh', ['-c', `ulimit -f 0 && exec "${process.execPath}" --conditions=@rein/source --import tsx "${script}" "${root}"`], { encoding: 'utf8' })
    expect(child.stderr).toBe('')
    expect(JSON.parse(child.stdout)).toEqual({ codes: ['SESSION_IO_FAILED', 'SESSION_IO_FAILED'], names: [] })
  })

  it('is written again when it, or the whole folder, was removed while the store lived', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.close('s1')
    await unlink(join(root, (await pidFiles(root))[0]!))
    await store.create(header('s2'))
    expect(await readFile(join(root, 's2.lock'), 'utf8')).toBe(`${process.pid}\n`)
    await store.close('s2')
    await rm(root, { recursive: true })
    await store.create(header('s3'))
    expect(await readFile(join(root, 's3.lock'), 'utf8')).toBe(`${process.pid}\n`)
    expect(await pidFiles(root)).toHaveLength(1)
    await store.dispose()
    expect(await readdir(root)).toEqual([])
  })
  it('is written anew when a disposed store claims again, and removed by its next dispose', async () => {
    const root = await tempRoot()
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.dispose()
    await store.create(header('s2'))
    expect(await readFile(join(root, 's2.lock'), 'utf8')).toBe(`${process.pid}\n`)
    await store.dispose()
    expect(await readdir(root)).toEqual([])
  })

  it('is each store\'s own: one store disposed leaves the locks another in this process holds', async () => {
    const root = await tempRoot()
    const first = new JsonlSessionStore({ root })
    const second = new JsonlSessionStore({ root })
    await first.create(header('s1'))
    await second.create(header('s2'))
    expect(await pidFiles(root)).toHaveLength(2)
    await first.dispose()
    expect(await readFile(join(root, 's2.lock'), 'utf8')).toBe(`${process.pid}\n`)
    await expect(first.create(header('s2'))).rejects.toMatchObject({ code: 'SESSION_LOCKED', details: { pid: process.pid } })
    await first.dispose()
    await second.dispose()
    expect(await readdir(root)).toEqual([])
  })

  it('of a live process is kept by the sweep', async () => {
    const root = await tempRoot()
    const sleeper = spawn('sleep', ['30'])
    children.push(sleeper)
    const theirs = `.owner.lock.${sleeper.pid!}.${randomUUID()}.tmp`
    await writeFile(join(root, theirs), `${sleeper.pid!}\n`)
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.dispose()
    expect(await readdir(root)).toEqual([theirs])
  })
})
