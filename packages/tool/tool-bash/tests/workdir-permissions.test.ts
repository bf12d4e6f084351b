// A folder the user may enter but not list (mode --x) is a place a shell can start in: `cd` into it
// works, so a command given it as workdir must too. Run without capabilities, as any user would.
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const repository = fileURLToPath(new URL('../../../../', import.meta.url))
const script = fileURLToPath(new URL('./fixtures/command-without-caps.ts', import.meta.url))
let base: string

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'rein-workdir-perm-')))
  chmodSync(base, 0o755)
})
afterEach(() => rmSync(base, { recursive: true, force: true }))

const asRoot = process.getuid?.() === 0
/** Root passes every mode check: its child drops its capabilities (setpriv) so the mode bits decide; another user's need nothing. */
const withoutCaps = asRoot ? ['setpriv', '--inh-caps=-all', '--bounding-set=-all', process.execPath] : [process.execPath]
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0

function bashWithoutCaps(workspace: string, args: Record<string, unknown>): { code: string; text?: string; message?: string } {
  const [command = process.execPath, ...prefix] = withoutCaps
  const child = spawnSync(command, [
    ...prefix, '--conditions=@rein/source', '--import', 'tsx', script, JSON.stringify({ workspace, args }),
  ], { cwd: repository, encoding: 'utf8', env: { ...process.env, HOME: tmpdir() } })
  if (child.status !== 0) throw new Error(`the child failed (${child.status}): ${child.stderr}`)
  return JSON.parse(child.stdout) as { code: string; text?: string; message?: string }
}

describe.skipIf(asRoot && !hasSetpriv)('a workdir the user may enter but not list', () => {
  it('runs the command there (mode 0111), as `cd` into it would', () => {
    const folder = join(base, 'enter-only')
    mkdirSync(folder)
    chmodSync(folder, 0o111)
    expect(bashWithoutCaps(base, { command: 'pwd', description: 'Where', workdir: 'enter-only' })).toEqual({ code: 'ok', text: `${folder}\n[exit code: 0]` })
  }, 30_000)

  it('still refuses one the user may not enter (mode 0600), naming why', () => {
    const folder = join(base, 'closed')
    mkdirSync(folder)
    chmodSync(folder, 0o600)
    const refused = bashWithoutCaps(base, { command: 'pwd', description: 'Where', workdir: 'closed' })
    expect(refused).toEqual({ code: 'SHELL_START_FAILED', message: `could not start in ${folder}: the folder may not be entered (EACCES); nothing ran; give a folder the user may enter, or leave workdir out` })
  }, 30_000)
})
