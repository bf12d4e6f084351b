import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ensurePrivateDir, makeFilePrivate, openPrivateFile } from '../src/index.ts'

const dirs: string[] = []
afterEach(() => { for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true }) })
const mode = (path: string) => statSync(path).mode & 0o777

describe('private files', () => {
  it('makes missing folders 0700 and narrows an existing one', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rein-private-'))
    dirs.push(root)
    await ensurePrivateDir(join(root, 'a', 'b'))
    expect([mode(join(root, 'a')), mode(join(root, 'a', 'b'))]).toEqual([0o700, 0o700])
    mkdirSync(join(root, 'open'), { mode: 0o755 })
    await ensurePrivateDir(join(root, 'open'))
    expect(mode(join(root, 'open'))).toBe(0o700)
  })

  it('leaves a shared folder (sticky, like /tmp) as it is', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rein-private-'))
    dirs.push(root)
    mkdirSync(join(root, 'shared'))
    chmodSync(join(root, 'shared'), 0o1777)
    await ensurePrivateDir(join(root, 'shared'))
    expect(statSync(join(root, 'shared')).mode & 0o7777).toBe(0o1777)
  })

  // Giving a folder to another user needs root.
  it.runIf(process.getuid?.() === 0)('leaves another user\'s folder as it is', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rein-private-'))
    dirs.push(root)
    mkdirSync(join(root, 'theirs'), { mode: 0o755 })
    chownSync(join(root, 'theirs'), 65534, 65534)
    await ensurePrivateDir(join(root, 'theirs'))
    expect(mode(join(root, 'theirs'))).toBe(0o755)
  })

  it('narrows a file an older writer left readable to others', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rein-private-'))
    dirs.push(root)
    writeFileSync(join(root, 'old'), 'x', { mode: 0o644 })
    const handle = await open(join(root, 'old'), 'r+')
    await makeFilePrivate(handle)
    await handle.close()
    expect(mode(join(root, 'old'))).toBe(0o600)
  })

  it('creates files 0600', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rein-private-'))
    dirs.push(root)
    const handle = await openPrivateFile(join(root, 'f'), 'wx')
    await handle.close()
    expect(mode(join(root, 'f'))).toBe(0o600)
  })
})
