// Sinks that throw, reject or never answer: contained, logged once per kind, never felt by the run.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Context } from '@deepseek-ai/cordis'
import { describe, expect, it } from 'vitest'
import type { TelemetrySink } from '../src/index.ts'
import { boot, recorder, usage } from './harness.ts'

const never = () => new Promise<void>(() => {})

function brokenSinks() {
  const calls = { thrower: 0, rejecter: 0, slow: 0 }
  const thrower: TelemetrySink = {
    name: 'thrower',
    emit: () => { calls.thrower++; throw new Error('emit broke') },
    flush: () => { throw new Error('flush broke') },
  }
  const rejecter: TelemetrySink = {
    name: 'rejecter',
    // A sink typed as synchronous may still hand back a promise.
    emit: (() => { calls.rejecter++; return Promise.reject(new Error('emit rejected')) }) as TelemetrySink['emit'],
    flush: () => Promise.reject(new Error('flush rejected')),
  }
  const slow: TelemetrySink = {
    name: 'slow',
    emit: (() => { calls.slow++; return never() }) as TelemetrySink['emit'],
    flush: never,
  }
  return { calls, sinks: [thrower, rejecter, slow] }
}

/** The telemetry service's log lines as `<sink>: <kind>`. */
function warnings(root: Context) {
  return root.logger.buffer
    .filter((entry) => entry.name === 'telemetry' && entry.type === 'error')
    .map((entry) => `${String(entry.args[1])}: ${String(entry.args[2])}`)
}

const SCRIPT = [[{ text: 'one' }, usage(3, 1)], [{ text: 'two' }, usage(3, 1)]]

describe('sinks', () => {
  it('keeps a run unaffected by sinks that throw, reject or never settle, and logs each kind once', async () => {
    const { root, create } = await boot(SCRIPT, { telemetry: { flushTimeoutMs: 20 } })
    const { calls, sinks } = brokenSinks()
    for (const sink of sinks) root.telemetry.sink(sink)
    const good = recorder()
    root.telemetry.sink(good)
    const agent = await create()
    expect(await agent.send('first')).toMatchObject({ reason: 'completed', text: 'one', usage: { inputTokens: 3, outputTokens: 1 } })
    expect(await agent.send('second')).toMatchObject({ reason: 'completed', text: 'two' })
    // Every sink got every record; the one after the broken ones too.
    expect(good.records).toHaveLength(12)
    expect(calls).toEqual({ thrower: 12, rejecter: 12, slow: 12 })
    await root.telemetry.flush()
    await root.telemetry.flush()
    // Rejections are logged when they settle: wait for them, not for a time.
    await expect.poll(() => warnings(root).length).toBe(5)
    expect(new Set(warnings(root))).toEqual(new Set([
      'rejecter: emit rejected',
      'rejecter: flush failed',
      'slow: flush timed out',
      'thrower: emit threw',
      'thrower: flush failed',
    ]))
    expect(warnings(root)).toHaveLength(5)
    expect(agent.session.events.map((event) => event.type).filter((type) => type.startsWith('turn/'))).toEqual(['turn/start', 'turn/end', 'turn/start', 'turn/end'])
  })

  it('flushes every sink with a flush, and resolves with none registered', async () => {
    const { root } = await boot([])
    await root.telemetry.flush()
    let flushed = 0
    root.telemetry.sink({ name: 'a', emit: () => {}, flush: async () => { flushed++ } })
    root.telemetry.sink({ name: 'b', emit: () => {} })
    await root.telemetry.flush()
    expect(flushed).toBe(1)
    expect(warnings(root)).toEqual([])
  })

  it('drops a sink when the plugin that registered it is disposed', async () => {
    const { root, create } = await boot(SCRIPT)
    const sink = recorder()
    const fiber = await root.plugin({ name: 'exporter', inject: ['telemetry'], apply: (ctx: Context) => { ctx.telemetry.sink(sink) } })
    await (await create()).send('first')
    expect(sink.records).toHaveLength(6)
    await fiber.dispose()
    await (await create()).send('second')
    expect(sink.records).toHaveLength(6)
  })
})

describe('a flush that never settles, in a process with nothing else to do', () => {
  it('returns once flushTimeoutMs has passed, so the code after it runs (the process ended mid-await, exit 13)', () => {
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href
    const script = fileURLToPath(new URL('./fixtures/stuck-flush.ts', import.meta.url))
    const run = spawnSync(process.execPath, ['--conditions=@rein/source', '--import', tsx, script], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
    expect({ status: run.status, stdout: run.stdout }).toEqual({ status: 0, stdout: 'flush returned\ndisposed\n' })
  })
})
