// Folders a command made, where mode bits get in the way: a folder the first walk could not list
// is not taken for new when it can be, and a made folder the rewind may not remove is reported
// while the rest of the rewind goes on. Run in a child without capabilities (see the fixture).
import { spawnSync } from 'node:child_process'
import { chmod, mkdir, readdir, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { CheckpointRecord, RewindResult } from '../src/index.ts'
import { tempRoot } from './harness.ts'

const repository = fileURLToPath(new URL('../../../../', import.meta.url))
const script = fileURLToPath(new URL('./fixtures/commands-as-user.ts', import.meta.url))

async function asUser(workspace: string, commands: string[]): Promise<{ records: CheckpointRecord[]; result: RewindResult }> {
  const home = await tempRoot()
  const child = spawnSync('setpriv', [
    '--inh-caps=-all', '--bounding-set=-all',
    process.execPath, '--conditions=@rein/source', '--import', 'tsx', script, JSON.stringify({ workspace, home, commands }),
  ], { cwd: repository, encoding: 'utf8', env: { ...process.env, HOME: tmpdir() } })
  if (child.status !== 0) throw new Error(`the child failed (${child.status}): ${child.stderr}`)
  return JSON.parse(child.stdout) as { records: CheckpointRecord[]; result: RewindResult }
}

describe('made folders and permissions', () => {
  it('does not take the empty folders of a folder the last walk could not list for new ones, and never removes them', async () => {
    const workspace = await tempRoot()
    await mkdir(join(workspace, 'locked/inner'), { recursive: true })
    await chmod(join(workspace, 'locked'), 0o000)
    const { records } = await asUser(workspace, ['true', 'chmod 755 locked'])
    expect(records.filter((record) => record.folder)).toEqual([])
    expect(await readdir(join(workspace, 'locked'))).toEqual(['inner'])
  })

  it('takes nothing in a folder a command made unreadable for deleted, records the rest of what it did, and a rewind leaves that folder as it is', async () => {
    const workspace = await tempRoot()
    await mkdir(join(workspace, 'private/inner'), { recursive: true })
    await writeFile(join(workspace, 'private/inner/notes.txt'), 'mine')
    const { records, result } = await asUser(workspace, ['true', 'chmod 000 private && echo x > made.txt'])
    expect(records.map((record) => record.path)).toEqual(['made.txt'])
    expect(result.restored.map((item) => item.path)).toEqual(['made.txt'])
    await chmod(join(workspace, 'private'), 0o755)
    expect(await readdir(join(workspace, 'private/inner'))).toEqual(['notes.txt'])
  })

  it('makes again an empty folder removed inside one that went read-only and was removed after it', async () => {
    const workspace = await tempRoot()
    await mkdir(join(workspace, 'a/b'), { recursive: true })
    const { records, result } = await asUser(workspace, ['true', 'rmdir a/b && chmod 555 a', 'rmdir a'])
    expect(records.map((record) => [record.path, record.existed, record.mode])).toEqual([['a/b', true, 0o755], ['a', true, 0o555]])
    expect(result.failed).toEqual([])
    expect(result.restored.map((item) => item.path).sort()).toEqual(['a', 'a/b'])
    expect(await readdir(join(workspace, 'a'))).toEqual(['b'])
    expect((await stat(join(workspace, 'a'))).mode & 0o7777).toBe(0o555)
    expect((await stat(join(workspace, 'a/b'))).mode & 0o7777).toBe(0o755)
  })

  it('reports a made folder it may not remove as failed, and removes the rest', async () => {
    const workspace = await tempRoot()
    const { records, result } = await asUser(workspace, ['true', 'mkdir -p ro/made ok/made && chmod 555 ro'])
    expect(records.map((record) => [record.path, record.folder, record.createdFolders])).toEqual([['ok/made', true, 1], ['ro/made', true, 1]])
    expect(result.restored.map((item) => [item.path, item.folders?.map((folder) => [folder.path, folder.action])])).toEqual([
      ['ok/made', [['ok/made', 'remove'], ['ok', 'remove']]],
    ])
    expect(result.failed).toMatchObject([{ path: 'ro/made', folder: true, error: expect.stringMatching(/could not be removed: EACCES/) }])
    await chmod(join(workspace, 'ro'), 0o755)
    expect((await readdir(workspace)).sort()).toEqual(['ro'])
    expect(await readdir(join(workspace, 'ro'))).toEqual(['made'])
  })
})

describe('a file the system refuses to restore or move aside', () => {
  it('fails with CHECKPOINT_WRITE_REFUSED naming the folder that may not be written and what to do, not a bare EACCES', async () => {
    const workspace = await tempRoot()
    await mkdir(join(workspace, 'd'))
    await writeFile(join(workspace, 'd/keep.txt'), 'keep')
    // The person made d read-only after the agent's command (a folder's chmod is not recorded).
    const { result } = await asUser(workspace, ['true', 'echo new > d/new.txt && echo more >> d/keep.txt', 'chmod 555 d'])
    await chmod(join(workspace, 'd'), 0o755)
    const hint = 'its folder d may not be written (EACCES): give it write permission (chmod u+w d), then rewind again'
    expect(result.failed.map((item): [string, string] => [item.path, item.error]).sort(([a], [b]) => a.localeCompare(b))).toEqual([
      ['d/keep.txt', `CHECKPOINT_WRITE_REFUSED: d/keep.txt was left as it is: ${hint}`],
      ['d/new.txt', `CHECKPOINT_WRITE_REFUSED: d/new.txt was left as it is: ${hint}`],
    ])
    expect(await readdir(join(workspace, 'd'))).toEqual(['keep.txt', 'new.txt'])
  })

  it('quotes, in the chmod it advises, a folder whose name a shell would split', async () => {
    const workspace = await tempRoot()
    await mkdir(join(workspace, 'my dir'))
    const { result } = await asUser(workspace, ['true', "echo new > 'my dir/new.txt'", "chmod 555 'my dir'"])
    await chmod(join(workspace, 'my dir'), 0o755)
    expect(result.failed.map((item) => item.error)).toEqual([
      "CHECKPOINT_WRITE_REFUSED: my dir/new.txt was left as it is: its folder my dir may not be written (EACCES): give it write permission (chmod u+w 'my dir'), then rewind again",
    ])
  })
})
