import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { measuredCommit } from '../measured-commit.mjs'

const made: string[] = []
afterEach(() => { for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true }) })

/** A repository with one commit: packages/a.ts, soak/run.mjs and docs/report.md. */
function repository() {
  const dir = mkdtempSync(join(tmpdir(), 'rein-commit-'))
  made.push(dir)
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim()
  for (const folder of ['packages', 'soak', 'docs']) mkdirSync(join(dir, folder))
  writeFileSync(join(dir, 'packages', 'a.ts'), 'one\n')
  writeFileSync(join(dir, 'soak', 'run.mjs'), 'run\n')
  writeFileSync(join(dir, 'docs', 'report.md'), 'old\n')
  git('init', '-q')
  git('add', '.')
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'one')
  return { dir, head: git('rev-parse', '--short', 'HEAD') }
}

describe('measuredCommit', () => {
  it('names HEAD, and says +changes for a change anywhere in the checkout, even seen from a subfolder', () => {
    const { dir, head } = repository()
    writeFileSync(join(dir, 'docs', 'report.md'), 'new\n')
    expect(measuredCommit(join(dir, 'soak'), 'docs/report.md')).toBe(head)
    writeFileSync(join(dir, 'packages', 'a.ts'), 'two\n')
    expect(measuredCommit(join(dir, 'soak'), 'docs/report.md')).toBe(`${head}+changes`)
    expect(measuredCommit(dir, 'docs/report.md')).toBe(`${head}+changes`)
  })

  it('counts a new file as a change, and says unknown outside git', () => {
    const { dir, head } = repository()
    writeFileSync(join(dir, 'packages', 'b.ts'), 'new\n')
    expect(measuredCommit(dir, 'docs/report.md')).toBe(`${head}+changes`)
    const outside = mkdtempSync(join(tmpdir(), 'rein-commit-'))
    made.push(outside)
    expect(measuredCommit(outside, 'docs/report.md')).toBe('unknown')
  })
})
