// rein killed between a write's temporary file and its rename: the resume that repairs the call
// (through the tool's `recover`) removes the temporary file from the workspace.
import { spawnSync } from 'node:child_process'
import { readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { boot, useFolders } from './harness.ts'

const folders = useFolders()

describe('a write interrupted by a kill', () => {
  const calls: [string, Record<string, unknown>][] = [
    ['write', { path: 'b.txt', content: 'x' }],
    ['edit', { path: 'b.txt', old_string: 'beta', new_string: 'x' }],
    ['multi_edit', { path: 'b.txt', edits: [{ old_string: 'beta', new_string: 'x' }] }],
  ]
  it.each(calls)('leaves no temporary file in the workspace once %s is recovered', async (name, args) => {
    const f = folders()
    const { root } = await boot(f)
    writeFileSync(join(f.workspace, 'b.txt'), 'beta\n')
    // What a SIGKILL after the temporary file was made and before the rename leaves (its process is gone).
    const dead = spawnSync('true').pid
    writeFileSync(join(f.workspace, `.b.txt.${dead}.ded0fb37c049.rein-tmp`), 'beta\nmore\n')
    // Not to remove: a write in progress in a live process, another file's, a name that only looks alike.
    const live = `.b.txt.${process.pid}.0123456789ab.rein-tmp`
    writeFileSync(join(f.workspace, live), 'in progress\n')
    writeFileSync(join(f.workspace, `.c.txt.${dead}.ded0fb37c049.rein-tmp`), 'c\n')
    writeFileSync(join(f.workspace, '.b.txt.notes.rein-tmp'), 'keep\n')
    const result = await root.tools.recover({
      callId: 'call-killed', name, arguments: JSON.stringify(args),
      signal: new AbortController().signal,
      context: { sessionId: 'session-a', cwd: f.workspace, workspaceRoot: f.workspace },
    })
    // The outcome is still unknown: the model is told to check.
    expect(result).toBeUndefined()
    expect(readdirSync(f.workspace).sort()).toEqual([live, '.b.txt.notes.rein-tmp', `.c.txt.${dead}.ded0fb37c049.rein-tmp`, 'b.txt'].sort())
  })
})
