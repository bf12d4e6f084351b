import { spawnSync } from 'node:child_process'
import { appendFile, open, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { appendDurably, fileTarget, type AppendTarget } from '../src/durable-write.ts'
import { JsonlSessionStore } from '../src/index.ts'
import { event, header, range } from './fixtures/sessions.ts'
import { tempRoot } from './temp-root.ts'

const systemError = (code: string) => Object.assign(new Error(`${code}: simulated`), { code })

async function withFile(content: string, body: (handle: Awaited<ReturnType<typeof open>>, file: string) => Promise<void>) {
  const file = join(await tempRoot(), 'log.jsonl')
  await writeFile(file, content)
  const handle = await open(file, 'r+')
  try {
    await body(handle, file)
  } finally {
    await handle.close()
  }
}

describe('appendDurably', () => {
  it('truncates bytes already written when the fsync fails, and rethrows', async () => {
    await withFile('{"a":1}\n', async (handle, file) => {
      const fd = fileTarget(handle.fd)
      const target: AppendTarget = { ...fd, sync: () => { throw systemError('EIO') } }
      await expect(appendDurably(target, 8, Buffer.from('{"b":2}\n'))).rejects.toMatchObject({ code: 'EIO' })
      expect(await readFile(file, 'utf8')).toBe('{"a":1}\n')
    })
  })

  it('truncates a partial line when the write stops halfway', async () => {
    await withFile('{"a":1}\n', async (handle, file) => {
      let calls = 0
      const fd = fileTarget(handle.fd)
      const target: AppendTarget = {
        ...fd,
        write: (buffer, offset, _length, position) => {
          if (calls++ > 0) throw systemError('ENOSPC')
          return fd.write(buffer, offset, 3, position)
        },
      }
      await expect(appendDurably(target, 8, Buffer.from('{"b":2}\n'))).rejects.toMatchObject({ code: 'ENOSPC' })
      expect(await readFile(file, 'utf8')).toBe('{"a":1}\n')
      await appendDurably(fd, 8, Buffer.from('{"c":3}\n'))
      expect(await readFile(file, 'utf8')).toBe('{"a":1}\n{"c":3}\n')
    })
  })
})

describe('JsonlSessionStore write failures', () => {
  it('rolls a batch the kernel cut short back off the file, reports it from flush, and takes the retry', async () => {
    const root = await tempRoot()
    const script = fileURLToPath(new URL('fixtures/write-past-limit.ts', import.meta.url))
    // ulimit -f counts 512-byte blocks: a 1 MiB limit, then a 2 MiB event. Node ignores SIGXFSZ,
    // so the kernel writes up to the limit and the next write fails with EFBIG.
    const command = `ulimit -f 2048 && exec "${process.execPath}" --conditions=@rein/source --import tsx "${script}" "${root}" 2097152`
    const child = spawnSync('sh', ['-c', command], { encoding: 'utf8' })
    expect(child.stderr).toBe('')
    const report = JSON.parse(child.stdout) as { before: number; after: number; message: string }
    // The details name the file and the errno, for a caller (the CLI) to say what happened in its own terms.
    expect(report).toEqual({ before: report.before, after: report.before, code: 'SESSION_WRITE_FAILED', message: report.message, details: { id: 's1', fromSeq: 1, file: join(root, 's1.jsonl'), errno: 'EFBIG' }, cause: 'EFBIG' })
    // The message names every event of the lost batch, not only its first.
    expect(report.message).toMatch(/^session s1: events 1-2 were not written \(.*EFBIG.*\); the file is as it was, so append them again from seq 1$/)
    expect((await new JsonlSessionStore({ root }).load('s1')).events).toEqual(range(0, 3))
  })

  it('writes nothing over what another process appended since its last write (its lock taken over or deleted): the flush fails SESSION_LOCKED and the other\'s lines stay whole', async () => {
    const root = await tempRoot()
    const file = join(root, 's1.jsonl')
    const store = new JsonlSessionStore({ root })
    await store.create(header('s1'))
    await store.append('s1', [event(0)])
    await store.flush('s1')
    const theirs = `${JSON.stringify(event(1, 'step/start', { turn: 9, step: 9 }))}\n`
    await appendFile(file, theirs)
    const before = await readFile(file, 'utf8')
    await store.append('s1', [event(1)])
    await expect(store.flush('s1')).rejects.toMatchObject({ code: 'SESSION_LOCKED', message: expect.stringMatching(/another process wrote to .*s1\.jsonl since this one last did/) })
    // A retry neither writes over their line nor cuts it off.
    await store.append('s1', [event(1)]).catch(() => undefined)
    await store.flush('s1').catch(() => undefined)
    await store.close('s1').catch(() => undefined)
    expect(await readFile(file, 'utf8')).toBe(before)
  })

  it('drops events queued behind a failed batch and rejects appends until one retries from the first lost seq', async () => {
    const root = await tempRoot()
    const file = join(root, 's1.jsonl')
    const store = new JsonlSessionStore({ root, batchDelayMs: 3_600_000 })
    await store.create(header('s1'))
    await writeFile(file, 'someone else\n')
    await store.append('s1', [event(0)])
    const first = store.flush('s1').catch((error: unknown) => error)
    await store.append('s1', [event(1)])
    await expect(store.flush('s1')).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
    expect(await first).toMatchObject({ code: 'SESSION_EXISTS' })
    await expect(store.append('s1', [event(2)])).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
    await expect(store.append('s1', [event(1)])).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
    await store.append('s1', [event(0)])
    await expect(store.append('s1', [event(2)])).rejects.toMatchObject({ code: 'SESSION_SEQ_MISMATCH' })
    await expect(store.close('s1')).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
    expect(await readFile(file, 'utf8')).toBe('someone else\n')
  })
})
