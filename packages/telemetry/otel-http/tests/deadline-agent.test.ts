// The exporters' own agents still honour the OTLP TLS variables the SDK's agent would have read.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import type { Agent as HttpsAgent } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { deadlineAgents, tlsFromEnvironment } from '../src/deadline-agent.ts'

const folders: string[] = []
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })))
})

describe('TLS for the export agents', () => {
  it('reads the signal\'s certificate variables before the general ones, leaves out what cannot be read, and gives them to the https agent', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'rein-otel-tls-'))
    folders.push(folder)
    await writeFile(join(folder, 'ca.pem'), 'general CA')
    await writeFile(join(folder, 'traces-ca.pem'), 'traces CA')
    await writeFile(join(folder, 'client.pem'), 'client cert')
    const env = {
      OTEL_EXPORTER_OTLP_CERTIFICATE: join(folder, 'ca.pem'),
      OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: join(folder, 'traces-ca.pem'),
      OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: join(folder, 'client.pem'),
      OTEL_EXPORTER_OTLP_CLIENT_KEY: join(folder, 'missing.pem'),
    }
    const traces = tlsFromEnvironment('TRACES', env)
    expect({ ca: String(traces.ca), cert: String(traces.cert), key: traces.key }).toEqual({ ca: 'traces CA', cert: 'client cert', key: undefined })
    expect(String(tlsFromEnvironment('METRICS', env).ca)).toBe('general CA')
    const agents = deadlineAgents(1_000, traces)
    const agent = await agents.factory('https:') as HttpsAgent
    expect(String(agent.options.ca)).toBe('traces CA')
    agents.close()
  })
})
