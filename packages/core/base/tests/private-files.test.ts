import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ensurePrivateDir, openPrivateFile } from '../src/index.ts'

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

  it('creates files 0600', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rein-private-'))
    dirs.push(root)
    const handle = await openPrivateFile(join(root, 'f'), 'wx')
    await handle.close()
    expect(mode(join(root, 'f'))).toBe(0o600)
  })
})
