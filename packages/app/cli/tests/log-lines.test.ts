// What rein prints of a plugin's log line without --verbose: a leading error loses its stack frames, nothing else changes.
import { Logger } from '@deepseek-ai/cordis'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { withoutFrames } from '../src/plugin-logs.ts'
import { project, rein, type Project } from './harness.ts'

let current: Project | undefined
afterEach(async () => {
  await current?.cleanup()
  current = undefined
})

const line = (...args: unknown[]) => Logger.format({ export: () => {} }, withoutFrames({ type: 'error', name: 'x', level: 0, ts: 0, args, content: '' } as never))

describe('withoutFrames', () => {
  it("drops a leading error's stack frames and keeps what follows it", () => {
    const error = new Error('the package is missing')
    expect(line(error, 'extra')).toBe('Error: the package is missing extra')
    expect(error.stack).toMatch(/\n {4}at /)
  })

  it('leaves a message that is text alone, indented lines included', () => {
    expect(line('two problems:\n  at least one provider is needed\n    at row 2')).toBe('two problems:\n  at least one provider is needed\n    at row 2')
    expect(line('failed: %s', new Error('no'))).toBe('failed: Error: no')
  })
})

describe("a plugin's error with a cause", () => {
  it('is printed once: cordis logs the cause as a line of its own, which the error repeats', async () => {
    const p = current = await project([{ steps: [{ text: 'Hi.' }] }], { extraRows: ['- id: loud', '  name: ./loud.mjs'] })
    writeFileSync(join(p.dir, 'loud.mjs'), [
      "export const name = 'loud'",
      "export function apply(ctx) { ctx.logger('loud').error(new Error('the cache could not be opened: disk full', { cause: new Error('disk full') })) }",
      '',
    ].join('\n'))
    const run = await rein(p.dir, ['run', 'hello'])
    expect(run.code).toBe(0)
    expect(run.stderr.split('\n').filter((line) => line.startsWith('[error]'))).toEqual(['[error] loud: Error: the cache could not be opened: disk full'])
  })
})
