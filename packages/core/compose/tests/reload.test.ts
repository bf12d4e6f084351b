// reload(): a valid edit applies; an invalid one is reported and the rows keep running as they were.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import type { SlowLoad } from '../src/index.ts'
import { fixtures, rejection, useComposition } from './harness.ts'

const { log, writeConfig, load } = useComposition()

const counterRows = (config: string, name = 'FIXTURES/counter.ts') => [
  '- id: counter',
  `  name: ${name}`,
  `  config: ${config}`,
  '- id: user',
  '  name: FIXTURES/needs-counter.ts',
].join('\n')

describe('reload', () => {
  it('applies a valid edit', async () => {
    const file = writeConfig(counterRows('{label: a, start: 1}'))
    const composition = await load(file)
    writeConfig(counterRows('{label: b, start: 2}'))
    await composition.reload()
    expect(composition.ctx.counter.value).toBe(2)
    expect(composition.ctx.counter.config.label).toBe('b')
    expect(log()).toEqual(['start 1', 'stop', 'start 2'])
  })

  it.each([
    ['a wrong type', counterRows('{label: a, start: -1}'), `row "counter" (${fixtures}counter.ts): config.start: expected number >= 0 but got -1`],
    ['an unknown key', counterRows('{label: a, start: 2, strat: 3}'), `row "counter" (${fixtures}counter.ts): config.strat: unknown key; did you mean start?`],
    ['a value that makes the row fail to start', counterRows('{label: a, start: 5000}'), `row "counter" (${fixtures}counter.ts): failed to start: start 5000 is above the limit 1000`],
    ['a package that cannot be found', counterRows('{label: a, start: 2}', 'rein-plugin-that-does-not-exist'), `row "counter" (rein-plugin-that-does-not-exist): cannot load the plugin: Cannot find package 'rein-plugin-that-does-not-exist'`],
  ])('keeps the old row running with its old config and rejects an edit with %s', async (_label, edit, problem) => {
    const file = writeConfig(counterRows('{label: a, start: 1}'))
    const composition = await load(file)
    writeConfig(edit)
    const result = await rejection(composition.reload())
    expect(result.code).toBe('CONFIG_INVALID')
    expect(result.problems).toEqual(expect.arrayContaining([expect.stringContaining(problem)]))
    expect(composition.ctx.counter.value).toBe(1)
    expect(composition.ctx.counter.config.label).toBe('a')
    expect(log().at(-1)).toBe('start 1')
    // Putting rows back makes the loader mark the removed ones disabled; none of that reaches the file.
    expect(readFileSync(file, 'utf8')).toBe(edit.replaceAll('FIXTURES/', fixtures))
    // The restored composition takes the next valid edit as usual.
    writeConfig(counterRows('{label: c, start: 3}'))
    await composition.reload()
    expect(composition.ctx.counter.value).toBe(3)
    expect(log().at(-1)).toBe('start 3')
  })

  it('rejects an edit naming a package that cannot be found without stopping any row', async () => {
    const file = writeConfig(counterRows('{label: a, start: 1}'))
    const composition = await load(file)
    writeConfig(counterRows('{label: a, start: 2}', 'rein-plugin-that-does-not-exist'))
    expect((await rejection(composition.reload())).code).toBe('CONFIG_INVALID')
    // Found before anything starts: the running row was never stopped and started again.
    expect(log()).toEqual(['start 1'])
  })

  it('leaves no unhandled rejection behind when an edit makes a running row fail to start', async () => {
    const unhandled: unknown[] = []
    const record = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', record)
    try {
      const file = writeConfig(counterRows('{label: a, start: 1}'))
      const composition = await load(file)
      writeConfig(counterRows('{label: a, start: 5000}'))
      await rejection(composition.reload())
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('unhandledRejection', record)
    }
    expect(unhandled).toEqual([])
  })

  it('puts back a row the edit removed when an added row fails', async () => {
    const file = writeConfig(counterRows('{label: a, start: 1}'))
    const composition = await load(file)
    writeConfig(['- id: user', '  name: FIXTURES/needs-counter.ts', '- id: broken', '  name: FIXTURES/throws.ts'].join('\n'))
    const result = await rejection(composition.reload())
    expect(result.problems).toContain(`row "broken" (${fixtures}throws.ts): failed to start: cannot open the database: /nowhere/db.sqlite`)
    expect(composition.ctx.counter.value).toBe(1)
    expect(log().at(-1)).toBe('start 1')
  })

  it('starts the new plugin when a row keeps its id but names another plugin', async () => {
    const file = writeConfig(['- id: one', '  name: FIXTURES/recorder.ts', '  config: {name: first}'].join('\n'))
    const composition = await load(file)
    writeConfig(['- id: one', '  name: FIXTURES/counter.ts', '  config: {label: now-a-counter, start: 7}'].join('\n'))
    await composition.reload()
    expect(log()).toEqual(['start first', 'stop first'])
    expect(composition.ctx.counter.value).toBe(7)
  })

  it('tells onSlow which row a reload still waits for and, told it stalled, rejects naming that row instead of waiting forever', async () => {
    const file = writeConfig(counterRows('{label: a, start: 1}'))
    const composition = await load(file)
    writeConfig([counterRows('{label: a, start: 1}'), '- id: stuck', '  name: FIXTURES/hangs.ts'].join('\n'))
    const started = new Promise<void>((resolve) => { (globalThis as Record<string, unknown>).composeStarted = resolve })
    const told: SlowLoad[] = []
    let tell = () => {}
    const toldOnce = new Promise<void>((resolve) => { tell = resolve })
    const stalled = new AbortController()
    const reloading = rejection(composition.reload({ stalled: stalled.signal, slowAfterMs: 1, onSlow: (slow) => { told.push(slow); tell() } }))
    await Promise.all([started, toldOnce])
    // After 1 ms the edited file's modules may still be importing again (any of them), or the new row's apply running.
    const stuck = `row "stuck" (${fixtures}hangs.ts)`
    expect(told).toHaveLength(1)
    // Starting, only the new row is in its apply; importing, whichever modules are still loading.
    expect(told[0]!.step === 'start' ? told[0]!.rows : [stuck]).toEqual([stuck])
    expect(told[0]!.step).toMatch(/^(import|start)$/)
    stalled.abort()
    const { code, problems } = await reloading
    expect(code).toBe('CONFIG_INVALID')
    expect(problems).toEqual([`row "stuck" (${fixtures}hangs.ts): never finished starting — its apply awaits something that can never settle; fix the plugin, or disable the row`])
    // The rows the edit did not touch run on.
    expect(composition.ctx.counter.value).toBe(1)
    // A row is still starting: no later edit can be applied, nor the rows put back.
    writeConfig(counterRows('{label: b, start: 2}'))
    expect((await rejection(composition.reload())).message).toContain('row "stuck"')
    expect(composition.ctx.counter.value).toBe(1)
    // Disposing, told it stalled, gives up on the row still starting instead of waiting forever.
    const idle = new AbortController()
    const disposing = composition.dispose({ stalled: idle.signal })
    idle.abort()
    await disposing
  })
})
