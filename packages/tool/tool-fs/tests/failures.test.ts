// Failures the file system hands back: permission denied (in a child that keeps uid 0 but drops
// every capability, so file modes bind it and it can still read the repository wherever it is), a full disk during a write (injected, and on a tiny tmpfs where one can be
// mounted). Each is a clear error and leaves the original file as it was.
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { boot, codeOf, text, useFolders, write } from './harness.ts'

const folders = useFolders()
const repository = fileURLToPath(new URL('../../../../', import.meta.url))
const script = fileURLToPath(new URL('./fixtures/calls-as-user.ts', import.meta.url))

/**
 * Runs the calls in a child process without capabilities: still uid 0 (the owner of the files
 * here), but without CAP_DAC_OVERRIDE the owner's mode bits decide, as for any user.
 */
function callsWithoutPrivileges(workspace: string, calls: [string, Record<string, unknown>][]): { code: string; message?: string }[] {
  const child = spawnSync('setpriv', [
    '--inh-caps=-all', '--bounding-set=-all',
    process.execPath, '--conditions=@rein/source', '--import', 'tsx', script, JSON.stringify({ workspace, calls }),
  ], { cwd: repository, encoding: 'utf8', env: { ...process.env, HOME: tmpdir() } })
  if (child.status !== 0) throw new Error(`the child failed (${child.status}): ${child.stderr}`)
  return JSON.parse(child.stdout) as { code: string; message?: string }[]
}

describe('permission denied', () => {
  it('is PERMISSION_DENIED for an unreadable file, a read-only file and a read-only folder, each left intact', () => {
    const { base, workspace } = folders()
    chmodSync(base, 0o755)
    chmodSync(workspace, 0o777)
    write(join(workspace, 'private.txt'), 'root only\n')
    chmodSync(join(workspace, 'private.txt'), 0o000)
    write(join(workspace, 'readonly.txt'), 'frozen\n')
    chmodSync(join(workspace, 'readonly.txt'), 0o444)
    mkdirSync(join(workspace, 'locked'), { mode: 0o755 })
    write(join(workspace, 'locked', 'file.txt'), 'in a locked folder\n')
    chmodSync(join(workspace, 'locked', 'file.txt'), 0o666)
    chmodSync(join(workspace, 'locked'), 0o555)
    const results = callsWithoutPrivileges(workspace, [
      ['read', { path: 'private.txt' }],
      ['read', { path: 'readonly.txt' }],
      ['edit', { path: 'readonly.txt', old_string: 'frozen', new_string: 'thawed' }],
      ['read', { path: 'locked/file.txt' }],
      ['edit', { path: 'locked/file.txt', old_string: 'locked', new_string: 'open' }],
      ['write', { path: 'locked/new.txt', content: 'x' }],
    ])
    expect(results).toEqual([
      { code: 'PERMISSION_DENIED', message: 'permission denied: this process may not read private.txt' },
      { code: 'ok' },
      { code: 'PERMISSION_DENIED', message: 'readonly.txt is read-only (its permissions forbid writing it)' },
      { code: 'ok' },
      { code: 'PERMISSION_DENIED', message: 'permission denied: this process may not write locked/file.txt' },
      { code: 'PERMISSION_DENIED', message: 'permission denied: this process may not write locked/new.txt' },
    ])
    expect(readFileSync(join(workspace, 'readonly.txt'), 'utf8')).toBe('frozen\n')
    expect(readFileSync(join(workspace, 'locked', 'file.txt'), 'utf8')).toBe('in a locked folder\n')
    expect(readdirSync(join(workspace, 'locked'))).toEqual(['file.txt'])
  })
})

/** Whether `chattr +i` works here (root on a file system with the flag); it is taken off again at once. */
function canMarkImmutable(): boolean {
  const file = join(mkdtempSync(join(tmpdir(), 'rein-chattr-')), 'probe')
  try {
    execFileSync('sh', ['-c', `touch "${file}" && chattr +i "${file}" && chattr -i "${file}"`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

describe('a file marked immutable or append-only (chattr +i, +a)', () => {
  // +a passes access(W_OK): only the write itself meets it.
  it.skipIf(!canMarkImmutable()).each(['+i', '+a'])('is PERMISSION_DENIED naming the flag (%s), not its permissions, which allow writing', async (flag) => {
    const { workspace } = folders()
    const file = join(workspace, 'flagged.txt')
    write(file, 'fixed\n')
    const { call } = await boot(folders())
    await call('read', { path: 'flagged.txt' })
    execFileSync('chattr', [flag, file])
    try {
      const result = await call('edit', { path: 'flagged.txt', old_string: 'fixed', new_string: 'moved' })
      expect(codeOf(result)).toBe('PERMISSION_DENIED')
      expect(text(result)).toContain('flagged.txt cannot be changed (the system refuses it: EPERM, not its permissions); it may be marked immutable or append-only (lsattr shows it)')
    } finally {
      execFileSync('chattr', [flag.replace('+', '-'), file])
    }
    expect(readFileSync(file, 'utf8')).toBe('fixed\n')
  })
})

describe('a full disk during a write', () => {
  it('is WRITE_FAILED, keeps the original, and leaves no temporary file (injected ENOSPC)', async () => {
    const { workspace } = folders()
    write(join(workspace, 'a.txt'), 'original\n')
    const hooks = {
      async writeTemp(handle: import('node:fs/promises').FileHandle, data: Uint8Array) {
        await handle.write(data, 0, Math.floor(data.length / 2))
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })
      },
    }
    const { call } = await boot(folders(), { hooks })
    await call('read', { path: 'a.txt' })
    const result = await call('write', { path: 'a.txt', content: 'replacement\n'.repeat(100) })
    expect(result).toMatchObject({ isError: true, error: { code: 'WRITE_FAILED' } })
    expect(text(result)).toBe('Error: could not write a.txt: no space left on the device (ENOSPC); the file is unchanged')
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('original\n')
    expect(readdirSync(workspace)).toEqual(['a.txt'])
  })

  const mountable = canMountTmpfs()
  it.skipIf(!mountable)('is WRITE_FAILED on a real 64 KiB tmpfs, keeping the original', async () => {
    const { workspace } = folders()
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', workspace])
    try {
      write(join(workspace, 'a.txt'), 'original\n')
      const { call } = await boot(folders())
      await call('read', { path: 'a.txt' })
      const result = await call('write', { path: 'a.txt', content: 'x'.repeat(200 * 1024) })
      expect(codeOf(result)).toBe('WRITE_FAILED')
      expect(text(result)).toBe('Error: could not write a.txt: no space left on the device (ENOSPC); the file is unchanged')
      expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('original\n')
      expect(readdirSync(workspace)).toEqual(['a.txt'])
    } finally {
      execFileSync('umount', [workspace])
    }
  })
})

/** Whether this process may mount a tmpfs (root in a container that allows it). */
function canMountTmpfs(): boolean {
  const probe = mkdtempSync(join(tmpdir(), 'rein-fs-mount-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', probe], { stdio: 'ignore' })
    execFileSync('umount', [probe], { stdio: 'ignore' })
    return true
  } catch {
    return false
  } finally {
    rmdirSync(probe)
  }
}
