// What rein prints of a plugin's log line without --verbose: a leading error loses its stack frames, nothing else changes.
import { Context, Logger } from '@deepseek-ai/cordis'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { printPluginLogs, withoutFrames } from '../src/plugin-logs.ts'
import type { Io } from '../src/io.ts'
import { project, rein, type Project } from './harness.ts'

let current: Project | undefined
afterEach(async () => {
  vi.unstubAllEnvs()
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

/** The plugin log lines printPluginLogs writes to stderr, without --verbose, for a context of their own. */
function logLines(env: NodeJS.ProcessEnv = {}) {
  const context = new Context()
  const lines: string[] = []
  const stderr = { write: (text: string) => { lines.push(...text.split('\n').filter(Boolean)); return true } }
  const logs = printPluginLogs(context, { stderr, env } as unknown as Io, false)
  return { logger: context.logger('p'), logs, lines }
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 0))

describe('an error logged with a cause', () => {
  it('is one line when its message repeats the cause', async () => {
    const { logger, lines } = logLines()
    logger.error(new Error('the cache could not be opened: disk full', { cause: new Error('disk full') }))
    await settled()
    expect(lines).toEqual(['[error] p: Error: the cache could not be opened: disk full'])
  })

  it('keeps the cause when its message does not repeat it', async () => {
    const { logger, lines } = logLines()
    logger.error(new Error('could not open the cache', { cause: new Error("EACCES: permission denied, open '/var/cache/x.db'") }))
    await settled()
    expect(lines.join('\n')).toContain("EACCES: permission denied, open '/var/cache/x.db'")
    expect(lines.join('\n')).toContain('could not open the cache')
  })

  it('keeps a cause with no message, whose name and code say what it is', async () => {
    const { logger, lines } = logLines()
    const cause = Object.assign(new Error(''), { name: 'ConnectionRefused', code: 'ECONNREFUSED' })
    logger.error(new Error('could not reach the database', { cause }))
    await settled()
    expect(lines.join('\n')).toContain('ConnectionRefused')
  })

  it('keeps the cause of a row that fails to start, whose error the problem report states', async () => {
    const { logger, logs, lines } = logLines()
    const load = logs.around(async () => {
      logger.error(new Error('could not open the licence file', { cause: new Error('EACCES: permission denied') }))
      throw new Error('row "t" (./t.mjs): failed to start: could not open the licence file')
    })
    await expect(load).rejects.toThrow('failed to start')
    expect(lines).toEqual(['[error] p: Error: EACCES: permission denied'])
  })
})

describe('an error the problem report states', () => {
  it('is dropped when its message ends in a space (a schema saying `expected string but got `)', async () => {
    const { logger, logs, lines } = logLines()
    const load = logs.around(async () => {
      logger.error(new Error('row "v" (./v.mjs): config.label: expected string but got '))
      throw new Error('cordis.yml has a problem:\n  - row "v" (./v.mjs): config.label: expected string but got ')
    })
    await expect(load).rejects.toThrow('a problem')
    expect(lines).toEqual([])
  })
})

describe('a row whose start error contains a secret', () => {
  it('is printed once: the problem report states it masked, the log line holds it unmasked', async () => {
    const { logger, logs, lines } = logLines({ OPENAI_API_KEY: 'sk-SECRET-123456789' })
    const load = logs.around(async () => {
      logger.error(new Error('apply exploded sk-SECRET-123456789'))
      throw new Error('cordis.yml has a problem:\n  - row "t" (./throw.mjs): failed to start: apply exploded ***')
    })
    await expect(load).rejects.toThrow('a problem')
    expect(lines).toEqual([])
  })

  it('is named once by `rein run`, masked', async () => {
    const p = current = await project([{ steps: [{ text: 'Hi.' }] }], { extraRows: ['- id: t', '  name: ./throw.mjs'] })
    writeFileSync(join(p.dir, 'throw.mjs'), [
      "export const name = 'thrower'",
      "export function apply() { throw new Error('apply exploded sk-SECRET-123456789') }",
      '',
    ].join('\n'))
    // As in `rein`'s own process, where the composition masks what process.env holds.
    vi.stubEnv('OPENAI_API_KEY', 'sk-SECRET-123456789')
    const run = await rein(p.dir, ['run', 'hello'], { env: { OPENAI_API_KEY: 'sk-SECRET-123456789' } })
    vi.unstubAllEnvs()
    expect(run.stderr).not.toContain('sk-SECRET-123456789')
    expect(run.stderr).toContain('failed to start: apply exploded ***')
    expect(run.stderr.split('\n').filter((line) => line.startsWith('[error]'))).toEqual([])
  })
})

describe('a warning logged while a composition loads', () => {
  it('is printed at once, not when the load ends', async () => {
    const { logger, logs, lines } = logLines()
    let finish = () => {}
    const load = logs.around(() => new Promise<void>((resolve) => {
      logger.warn('database not reachable yet, retrying')
      finish = resolve
    }))
    await settled()
    expect(lines).toEqual(['[warn] p: database not reachable yet, retrying'])
    finish()
    await load
  })

  it('an error line still waits for the load, which may state it', async () => {
    const { logger, logs, lines } = logLines()
    let finish = () => {}
    const load = logs.around(() => new Promise<void>((resolve) => {
      logger.error('the cache is cold')
      finish = resolve
    }))
    await settled()
    expect(lines).toEqual([])
    finish()
    await load
    expect(lines).toEqual(['[error] p: the cache is cold'])
  })
})
