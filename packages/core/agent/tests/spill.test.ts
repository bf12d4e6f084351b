import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

const CHILD = fileURLToPath(new URL('./spill-full-disk.ts', import.meta.url))
const made: string[] = []
afterEach(() => {
  for (const folder of made.splice(0)) rmSync(folder, { recursive: true, force: true })
})

describe('a result that cannot be spilled whole', () => {
  it('leaves no partly written file behind when the disk refuses the rest (the model is told it was not saved)', () => {
    const folder = mkdtempSync(join(tmpdir(), 'rein-spill-'))
    made.push(folder)
    // 64 KiB per file: the 1 MB result's write fails part way, as on a full disk.
    const run = spawnSync('bash', ['-c', 'ulimit -f 64 && exec "$0" --conditions=@rein/source --import tsx "$1" "$2"', process.execPath, CHILD, folder], { encoding: 'utf8' })
    expect(run.stdout).toBe('failed EFBIG\n')
    expect(readdirSync(join(folder, 'spill'))).toEqual([])
  })
})
