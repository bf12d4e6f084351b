// A fork bomb run as an unprivileged user (root ignores RLIMIT_NPROC, and there are no cgroups
// here): `ulimit -u 64` contains it, and when the call ends everything it forked is gone.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bootBash, text } from './helpers.ts'
import { livingWith, uniqueTag } from './processes.ts'

const NOBODY = 65534
let dir: string

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rein-bomb-'))
  chmodSync(dir, 0o755)
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

/** Live processes whose real uid is `uid`. */
function ownedBy(uid: number): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).filter((name) => {
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8')
      return !/^State:\s+Z/m.test(status) && new RegExp(`^Uid:\\s+${uid}\\s`, 'm').test(status)
    } catch {
      return false
    }
  }).map(Number)
}

const asNobody = (script: string) => `ulimit -u 64; exec setpriv --reuid=${NOBODY} --regid=${NOBODY} --clear-groups bash -c '${script}'`

describe.skipIf(process.getuid?.() !== 0)('a fork bomb as an unprivileged user', () => {
  it('is contained and killed when its shell returns at once and the call ends', async () => {
    expect(ownedBy(NOBODY)).toEqual([])
    const { execute } = await bootBash()
    const tag = uniqueTag()
    const result = await execute({ command: asNobody(`: ${tag}; bomb() { bomb | bomb & }; bomb`), description: 'Fork bomb' }, undefined, { cwd: dir })
    // Whether any fork is still alive when the shell returns depends on the scheduler; none may be after.
    expect(text(result)).toMatch(/\[exit code: 0\]$/)
    expect(livingWith(tag)).toEqual([])
    expect(ownedBy(NOBODY)).toEqual([])
  }, 30_000)

  it('is contained, stopped at the timeout, and leaves no process behind', async () => {
    const { execute } = await bootBash()
    const tag = uniqueTag()
    const result = await execute({ command: asNobody(`: ${tag}; bomb() { bomb | bomb & }; bomb; exec sleep 30`), description: 'Fork bomb', timeout_ms: 1500 }, undefined, { cwd: dir })
    expect(text(result)).toContain('[timed out after 1,500 ms]')
    expect(livingWith(tag)).toEqual([])
    expect(ownedBy(NOBODY)).toEqual([])
  }, 30_000)

  it('is killed with SIGKILL when every fork ignores SIGTERM', async () => {
    const { execute } = await bootBash()
    const tag = uniqueTag()
    const result = await execute({ command: asNobody(`: ${tag}; trap "" TERM; bomb() { bomb | bomb & }; bomb; exec sleep 30`), description: 'Fork bomb', timeout_ms: 1500 }, undefined, { cwd: dir })
    expect(text(result)).toContain('[timed out after 1,500 ms]')
    expect(livingWith(tag)).toEqual([])
    expect(ownedBy(NOBODY)).toEqual([])
  }, 30_000)
})
