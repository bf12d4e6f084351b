// Every row's config is checked against its plugin's Config before any row starts.
import { describe, expect, it } from 'vitest'
import { fixtures, installed, useComposition } from './harness.ts'

const { log, writeConfig, failure } = useComposition()

const OPENAI_KEYS = 'provider, label, baseURL, apiKeyEnv, headers, models, streamIdleTimeoutMs, maxTokensField, providerName'

describe('config checks before start', () => {
  it('rejects a misspelled baseURL in an @rein/llm-openai row instead of sending the prompt to api.openai.com', async () => {
    const file = writeConfig([
      '- id: llm',
      "  name: '@rein/llm'",
      '- id: openai',
      "  name: '@rein/llm-openai'",
      '  config:',
      '    provider: main',
      '    baseUrl: http://127.0.0.1:9/v1',
      '    apiKeyEnv: false',
    ].join('\n'))
    const result = await failure(file, { resolveFrom: installed.llmOpenai })
    expect(result.code).toBe('CONFIG_INVALID')
    expect(result.problems).toEqual([
      'row "openai" (@rein/llm-openai): config.baseUrl: unknown key; did you mean baseURL?',
    ])
  })

  it('names unknown keys at any depth and in rows inside a group, suggesting only a close key', async () => {
    const file = writeConfig([
      '- id: group',
      '  name: FIXTURES/group.ts',
      '  group: true',
      '  config:',
      '    - id: openai',
      "      name: '@rein/llm-openai'",
      '      config:',
      '        apiKeyEnv: false',
      '        headers: {X-Anything-Goes: yes}',
      '        models:',
      '          - id: small',
      '            pricing: {input: 1, output: 2, cacheRaed: 1}',
      '        zzz: 1',
      '- id: counter',
      '  name: FIXTURES/counter.ts',
      '  config: {lable: hits}',
      '- id: llm',
      "  name: '@rein/llm'",
      '  config: {retry: {maxretries: 2}}',
    ].join('\n'))
    const { problems } = await failure(file, { resolveFrom: installed.llmOpenai })
    expect(problems).toEqual([
      'row "openai" (@rein/llm-openai): config.models[0].pricing.cacheRaed: unknown key; did you mean cacheRead?',
      `row "openai" (@rein/llm-openai): config.zzz: unknown key (the keys here are ${OPENAI_KEYS})`,
      `row "counter" (${fixtures}counter.ts): config.lable: unknown key; did you mean label?`,
      `row "counter" (${fixtures}counter.ts): config.label: missing required value`,
      'row "llm" (@rein/llm): config.retry.maxretries: unknown key; did you mean maxRetries?',
    ])
  })

  it('reports a config type error by row and field without starting any row', async () => {
    const file = writeConfig([
      '- id: first',
      '  name: FIXTURES/recorder.ts',
      '  config: {name: first}',
      '- id: counter',
      '  name: FIXTURES/counter.ts',
      '  config: {label: hits, start: -1}',
    ].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([`row "counter" (${fixtures}counter.ts): config.start: expected number >= 0 but got -1`])
    expect(log()).toEqual([])
  })

  it('validates a Config that is not schemastery, and leaves plugins without Config and !!js values to start', async () => {
    process.env.REIN_TEST_START = '-3'
    const file = writeConfig([
      '- id: standard',
      '  name: FIXTURES/standard.ts',
      '  config: {port: eighty, extra: 1}',
      '- id: plain',
      '  name: FIXTURES/recorder.ts',
      '  config: {name: plain, anything: 1}',
      '- id: counter',
      '  name: FIXTURES/counter.ts',
      '  config: {label: hits, start: !!js Number(process.env.REIN_TEST_START)}',
    ].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([
      `row "standard" (${fixtures}standard.ts): config.port: expected a port number`,
    ])
    expect(log()).toEqual([])
  })

  it('still reports a !!js value of the wrong type when its row starts', async () => {
    process.env.REIN_TEST_START = '-3'
    const file = writeConfig([
      '- id: counter',
      '  name: FIXTURES/counter.ts',
      '  config: {label: hits, start: !!js Number(process.env.REIN_TEST_START)}',
    ].join('\n'))
    const { problems } = await failure(file)
    expect(problems).toEqual([`row "counter" (${fixtures}counter.ts): config.start: expected number >= 0 but got -3`])
  })
})
