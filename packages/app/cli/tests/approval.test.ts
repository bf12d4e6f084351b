/**
 * Approval by effects from the CLI (issue #9 §3): in `rein run` and `rein resume` a call that needs
 * approval is denied with a result that tells the model how the user can allow it; `--allow` and
 * `--yes` allow; a composition's own approval row decides alone.
 */

import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { MockReply, MockStep, RecordedRequest } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { FIXTURES, projectPerTest, rein, sessionIdOf } from './harness.ts'

const setUp = projectPerTest(afterEach)

const toolCall = (name: string, args: object = {}, id = `${name}-1`): MockStep => ({ toolCall: { id, name, arguments: JSON.stringify(args) } })
const call = (name: string, args: object = {}): MockReply => ({ steps: [toolCall(name, args)] })
const answer = (text: string): MockReply => ({ steps: [{ text }] })

/** What the model read for each tool call, from the request that followed it. */
function toolResults(request: RecordedRequest | undefined): string[] {
  const { messages } = (request?.body ?? { messages: [] }) as { messages: { role: string; content: string }[] }
  return messages.filter((message) => message.role === 'tool').map((message) => message.content)
}

describe('rein run: approval by effects', () => {
  it('denies a tool that writes, and the model reads how the user can allow it', async () => {
    const p = await setUp([call('save', { text: 'hello' }), answer('I could not save.')])
    const run = await rein(p.dir, ['run', 'save hello'])
    expect(run.code).toBe(0)
    expect(run.stderr).toContain('  [tool] save {"text":"hello"} failed DENIED\n')
    expect(run.stderr).toContain('save was denied: it changes files; to allow it, rerun with --allow write (or --yes), or an approval row (@rein/tools/approval) in cordis.yml\n')
    expect(toolResults(p.server.requests[1])).toEqual([
      'Error: save was denied: it changes files, which needs approval, and this run asks nobody: the user can allow it with --allow write (or --yes), or an approval row (@rein/tools/approval) in cordis.yml',
    ])
    expect(existsSync(join(p.dir, 'saved.txt'))).toBe(false)
  })

  it('runs it with --allow write, and still denies a tool that executes, naming --allow exec', async () => {
    const p = await setUp([{ steps: [toolCall('save', { text: 'hello' }), toolCall('build')] }, answer('Saved; the build was refused.')])
    const run = await rein(p.dir, ['run', '--allow', 'write', 'save and build'])
    expect(run.code).toBe(0)
    expect(run.stderr).toContain('  [tool] save {"text":"hello"} ok\n')
    expect(run.stderr).toContain('  [tool] build {} failed DENIED\n')
    expect(toolResults(p.server.requests[1])).toEqual([
      'saved',
      'Error: build was denied: it runs commands, which needs approval, and this run asks nobody: the user can allow it with --allow exec (or --yes), or an approval row (@rein/tools/approval) in cordis.yml',
    ])
    expect(readFileSync(join(p.dir, 'saved.txt'), 'utf8')).toBe('hello\n')
    expect(existsSync(join(p.dir, 'builds.txt'))).toBe(false)
  })

  it('runs both with --allow write,exec or with --yes', async () => {
    const both: MockReply = { steps: [toolCall('save', { text: 'x' }), toolCall('build')] }
    const p = await setUp([both, answer('done'), both, answer('done')])
    for (const flags of [['--allow', 'write,exec'], ['--yes']]) {
      const run = await rein(p.dir, ['run', ...flags, 'save and build'])
      expect(run.stderr).toContain('  [tool] save {"text":"x"} ok\n')
      expect(run.stderr).toContain('  [tool] build {} ok\n')
    }
    expect(readFileSync(join(p.dir, 'builds.txt'), 'utf8')).toBe('built\nbuilt\n')
  })

  it('runs a reading tool without asking', async () => {
    const p = await setUp([call('lookup', { word: 'rein' }), answer('ok')])
    const run = await rein(p.dir, ['run', 'look it up'])
    expect(run.stderr).toContain('  [tool] lookup {"word":"rein"} ok\n')
  })

  it('denies the same way in rein resume', async () => {
    const p = await setUp([answer('first'), call('save', { text: 'later' }), answer('not saved')])
    const id = sessionIdOf(await rein(p.dir, ['run', 'hi']))
    const resumed = await rein(p.dir, ['resume', id, 'now save'])
    expect(resumed.stderr).toContain('  [tool] save {"text":"later"} failed DENIED\n')
    expect(toolResults(p.server.requests[2])).toEqual([expect.stringContaining('the user can allow it with --allow write (or --yes), or an approval row (@rein/tools/approval) in cordis.yml')])
  })
})

describe('a composition with its own approval row', () => {
  const approvalRow = ['- id: approval', `  name: '${join(FIXTURES, 'approve-save.ts')}'`]

  it('answers every approval itself', async () => {
    const p = await setUp([{ steps: [toolCall('save', { text: 'mine' }), toolCall('build')] }, answer('done')], { extraRows: approvalRow })
    const run = await rein(p.dir, ['run', 'save and build'])
    expect(run.stderr).toContain('  [tool] save {"text":"mine"} ok\n')
    expect(run.stderr).toContain('  [tool] build {} failed DENIED\n')
    expect(toolResults(p.server.requests[1])).toEqual(['saved', 'Error: build was not approved (it runs commands)'])
  })

  it('refuses --yes and --allow, which it would silently override, before anything runs', async () => {
    const p = await setUp([answer('never')], { extraRows: approvalRow })
    for (const flags of [['--yes'], ['--allow', 'write']]) {
      const run = await rein(p.dir, ['run', ...flags, 'hi'])
      expect(run.code).toBe(2)
      expect(run.stderr).toBe(`rein: the composition has its own approval row, which answers every approval; drop ${flags[0]}, or that row\n`)
    }
    expect(p.server.requests).toHaveLength(0)
  })
})
