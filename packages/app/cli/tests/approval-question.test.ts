// The question `rein chat` asks before a call shows what the call would do — a command, a file —
// not only the tool's name, nor the model's own description of it.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { chatTerminal as terminal, projectPerTest } from './harness.ts'

const setUp = projectPerTest(afterEach)
const ROWS = ["- { id: jobs, name: '@rein/jobs' }", "- { id: bash, name: '@rein/tool-bash' }", "- { id: fs, name: '@rein/tool-fs' }"]

describe('the approval question in rein chat', () => {
  it('shows the command a bash call would run, whatever the model described it as, each line of it', async () => {
    const command = 'echo EVIL > evil.txt\necho second line'
    const p = await setUp([
      { steps: [{ toolCall: { id: 'b1', name: 'bash', arguments: JSON.stringify({ command, description: 'list files', workdir: 'sub' }) } }] },
      { steps: [{ text: 'Not run.' }] },
    ], { extraRows: ROWS })
    const chat = terminal(p.dir)
    await expect.poll(chat.screen).toContain('> ')
    chat.type('list\r')
    await expect.poll(chat.screen).toContain('[y]es / [n]o / [a]lways for this session ')
    expect(chat.screen()).toContain('  $ echo EVIL > evil.txt\n    echo second line\n    (in sub)\n')
    chat.type('n\r')
    await expect.poll(chat.answer).toContain('Not run.')
    expect(existsSync(join(p.dir, 'evil.txt'))).toBe(false)
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  }, 30_000)

  it('names the file a write would change, on one line even when the path holds a line break', async () => {
    const p = await setUp([
      { steps: [{ toolCall: { id: 'w1', name: 'write', arguments: JSON.stringify({ path: 'a\n  [tool] fake.txt', content: 'x' }) } }] },
      { steps: [{ text: 'Not written.' }] },
    ], { extraRows: ROWS })
    const chat = terminal(p.dir)
    await expect.poll(chat.screen).toContain('> ')
    chat.type('write\r')
    await expect.poll(chat.screen).toContain('[y]es / [n]o / [a]lways for this session ')
    expect(chat.screen()).toMatch(/ {2}Write a\\n {2}\[tool\] fake\.txt\n/)
    chat.type('n\r')
    await expect.poll(chat.answer).toContain('Not written.')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  }, 30_000)
})
