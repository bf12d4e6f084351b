// A row that waits for a service is told which service, which package provides it, and which row failed.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { fixtures, installed, useComposition } from './harness.ts'

const { dir, writeConfig, failure } = useComposition()

/** `<dir>/<name>.mjs`: a plugin that provides `provide` and waits for the services in `inject`. */
function writePlugin(name: string, provide: string, inject: string[]) {
  writeFileSync(join(dir(), `${name}.mjs`), [
    `export const name = '${name}'`,
    `export const provide = '${provide}'`,
    `export const inject = ${JSON.stringify(inject)}`,
    `export const apply = (ctx) => { ctx.set('${provide}', {}) }`,
    '',
  ].join('\n'))
  return [`- id: ${name}`, `  name: ./${name}.mjs`]
}

describe('missing services', () => {
  it('names the package to add when session-jsonl has no sessions row', async () => {
    const file = writeConfig(['- id: store', "  name: '@rein/session-jsonl'", `  config: {root: ${dir()}/sessions}`].join('\n'))
    const { problems } = await failure(file, { resolveFrom: installed.sessionJsonl })
    expect(problems).toEqual([
      `row "store" (@rein/session-jsonl): waits for the service "sessions" that no row provides; add a row with name '@rein/session'`,
    ])
  })

  it('points llm-openai at the llm row whose config is invalid, not at adding a row', async () => {
    const file = writeConfig([
      '- id: llm',
      "  name: '@rein/llm'",
      '  config: {retry: {maxRetries: -1}}',
      '- id: openai',
      "  name: '@rein/llm-openai'",
      '  config: {apiKeyEnv: false}',
    ].join('\n'))
    const { problems } = await failure(file, { resolveFrom: installed.llmOpenai })
    expect(problems).toEqual([
      'row "llm" (@rein/llm): config.retry.maxRetries: expected number >= 0 but got -1',
      'row "openai" (@rein/llm-openai): needs the service "llm" from row "llm" (@rein/llm), which is invalid (see its error); fix that row first',
    ])
  })

  it('points at the providing row when it failed to start', async () => {
    const file = writeConfig([
      '- id: user',
      '  name: FIXTURES/needs-counter.ts',
      '- id: counter',
      '  name: FIXTURES/counter.ts',
      '  config: {label: a, start: 5000}',
    ].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([
      `row "user" (${fixtures}needs-counter.ts): waits for the service "counter" from row "counter" (${fixtures}counter.ts), which failed (see its error); fix that row first`,
      `row "counter" (${fixtures}counter.ts): failed to start: start 5000 is above the limit 1000`,
    ])
  })

  it('points at the providing row when it is disabled', async () => {
    const file = writeConfig([
      '- id: counter',
      '  name: FIXTURES/counter.ts',
      '  disabled: true',
      '  config: {label: a}',
      '- id: user',
      '  name: FIXTURES/needs-counter.ts',
    ].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([
      `row "user" (${fixtures}needs-counter.ts): waits for the service "counter" from row "counter" (${fixtures}counter.ts), which is disabled; enable that row`,
    ])
  })

  it('asks for the row that provides a service it does not know', async () => {
    const file = writeConfig(['- id: user', '  name: FIXTURES/needs-counter.ts'].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([
      `row "user" (${fixtures}needs-counter.ts): waits for the service "counter" that no row provides; add the row that provides it`,
    ])
  })

  it('names a cycle when two rows wait for each other\'s services, rather than calling each one failed', async () => {
    const file = writeConfig([...writePlugin('a', 'alpha', ['beta']), ...writePlugin('b', 'beta', ['alpha'])].join('\n'))
    const { code, problems } = await failure(file)
    expect(code).toBe('CONFIG_INVALID')
    expect(problems).toEqual([
      `rows "a" and "b" wait for each other's services (a → b → a): neither can start; let one of them start without the service it waits for: drop it from the row's or the plugin's inject, or have the plugin use it only when present (ctx.inject)`,
    ])
  })

  it('names a longer cycle in the order its rows wait, and points a row that needs one of them at it', async () => {
    const file = writeConfig([
      ...writePlugin('user', 'use', ['alpha']),
      ...writePlugin('a', 'alpha', ['beta']),
      ...writePlugin('c', 'gamma', ['alpha']),
      ...writePlugin('b', 'beta', ['gamma']),
    ].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([
      'row "user" (./user.mjs): waits for the service "alpha" from row "a" (./a.mjs), which cannot start either (see its error); fix that row first',
      `rows "a", "b" and "c" wait for each other's services (a → b → c → a): none can start; let one of them start without the service it waits for: drop it from the row's or the plugin's inject, or have the plugin use it only when present (ctx.inject)`,
    ])
  })
})
