// Loads @rein/otel-http from a cordis.yml by package name, as a user's project does, and takes it out again.
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { hasListeners } from '@rein/base'
import { useCordisYml } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { endpoint } from './harness.ts'

const yml = useCordisYml(afterEach, fileURLToPath(new URL('..', import.meta.url)))
const TELEMETRY_ROW = ['- id: telemetry', "  name: '@rein/telemetry'"]

describe('@rein/otel-http in a cordis.yml', () => {
  it('registers its sink on ctx.telemetry while its row is there', async () => {
    const server = await endpoint()
    const file = yml.write([...TELEMETRY_ROW, '- id: otel', "  name: '@rein/otel-http'", '  config:', `    endpoint: ${server.url}`, '    flushTimeoutMs: 500'])
    const composition = await yml.load(file)
    const { ctx } = composition
    // ctx.telemetry listens for steps only while some sink is registered.
    expect(hasListeners(ctx, 'agent/step-start')).toBe(true)
    writeFileSync(file, [...TELEMETRY_ROW, ''].join('\n'))
    await composition.reload()
    expect(ctx.get('telemetry')).toBeDefined()
    expect(hasListeners(ctx, 'agent/step-start')).toBe(false)
  })

  it('fails the load, naming the row and the field, on a bad config value', async () => {
    const file = yml.write([...TELEMETRY_ROW, '- id: otel', "  name: '@rein/otel-http'", '  config:', '    endpoint: localhost:4318'])
    await expect(yml.load(file)).rejects.toThrow('row "otel" (@rein/otel-http): config: endpoint')
  })

  it('says how to write an endpoint given without its scheme, not a pattern it failed to match', async () => {
    const file = yml.write([...TELEMETRY_ROW, '- id: otel', "  name: '@rein/otel-http'", '  config:', '    endpoint: localhost:4318'])
    const error = await yml.load(file).then(() => undefined, (caught: unknown) => caught)
    expect(String(error)).toContain('row "otel" (@rein/otel-http): config: endpoint "localhost:4318" has no http:// or https:// scheme; write endpoint: http://localhost:4318')
    expect(String(error)).not.toContain('regexp')
  })
})
