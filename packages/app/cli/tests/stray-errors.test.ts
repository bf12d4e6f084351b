/**
 * A tool or plugin that fails outside its call — a promise rejected with nothing to handle it, a
 * throw from its timer — must not end rein with Node's stack trace: a stray rejection is one
 * warning line and the turn goes on; a stray throw ends the process with one `rein:` line (exit 1)
 * and the log kept, so `rein resume` continues it. Neither line shows a secret. Real processes.
 */

import type { MockReply } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { FIXTURES, projectPerTest, sessionIdOf, spawnRein } from './harness.ts'

const KEY = 'sk-stray-test-4242424242'
const rows = [`- { id: stray, name: '${FIXTURES}stray-plugin.ts' }`]
const newProject = projectPerTest(afterEach)
const call = (name: string): MockReply => ({ steps: [{ toolCall: { id: 'call_1', name, arguments: '{}' } }] })

describe('a stray error from a tool', () => {
  it('a rejected promise a tool left behind is one masked warning line, and the turn completes', async () => {
    const p = await newProject((_request, index) => (index === 0 ? call('reject_stray') : { steps: [{ text: 'Done.' }] }), { extraRows: rows })
    const run = await spawnRein(p.dir, ['run', '--yes', 'go'], undefined, { STRAY_TEST_KEY: KEY, OPENAI_API_KEY: KEY })
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('Done.\n')
    const warnings = run.stderr.split('\n').filter((line) => line.startsWith('rein: warning:'))
    expect(warnings).toEqual([
      expect.stringMatching(/^rein: warning: .*nothing to handle it.*: stray failure with key \*\*\*$/),
      expect.stringMatching(/: a value that cannot be printed$/),
      expect.stringMatching(/: a plain object reason$/),
    ])
    expect(run.stderr).not.toContain(KEY)
    expect(run.stderr).not.toContain('Node.js v')
  })

  it('a throw from a tool\'s timer ends rein with one masked line, exit 1, and the session can be resumed', async () => {
    const p = await newProject((_request, index) => (index === 0 ? call('throw_stray') : { steps: [{ text: 'Resumed.' }] }), { extraRows: rows })
    const run = await spawnRein(p.dir, ['run', '--yes', 'go'], undefined, { STRAY_TEST_KEY: KEY, OPENAI_API_KEY: KEY })
    expect(run.code).toBe(1)
    expect(run.stderr).not.toContain(KEY)
    expect(run.stderr).not.toContain('Node.js v')
    expect(run.stderr).not.toMatch(/^\s+at /m)
    const last = run.stderr.trimEnd().split('\n').at(-1)
    expect(run.stderr).toMatch(/^rein: .*nothing to catch it.*stray failure with key \*\*\*$/m)
    expect(last).toMatch(/^rein: .*rein resume <id> continues it$/)
    const id = sessionIdOf(run)
    const resumed = await spawnRein(p.dir, ['resume', '--yes', id])
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toBe('Resumed.\n')
  })
})
