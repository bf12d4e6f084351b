// Every token and cent from the CLI (issue #13): the final line counts a subagent's usage into its
// parent's turn exactly once, says when the money is unknown, and OTEL_EXPORTER_OTLP_ENDPOINT
// exports the run's spans without a byte of the prompt.
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startMockOpenAiServer, type MockReply, type RecordedRequest } from '@rein/testkit'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { projectPerTest, rein } from './harness.ts'

const setUp = projectPerTest(afterEach)
const ROWS = ['- id: telemetry', "  name: '@rein/telemetry'"]
const PROMPT = 'ask the helper about marker-prompt-7f3a'

interface WireMessage { role: string; content?: string | null }
const lastMessage = (request: RecordedRequest) => ((request.body as { messages?: WireMessage[] }).messages ?? []).at(-1)

/** The parent delegates once; the child answers; the parent sums up. Usage differs per speaker. */
function delegating(request: RecordedRequest): MockReply {
  const last = lastMessage(request)
  if (last?.role === 'user' && last.content === 'child task') return { steps: [{ text: 'child answer' }], usage: { prompt_tokens: 30, completion_tokens: 3 } }
  if (last?.role === 'tool') return { steps: [{ text: 'done' }], usage: { prompt_tokens: 200, completion_tokens: 20 } }
  return { steps: [{ toolCall: { id: 'd1', name: 'delegate', arguments: '{"task":"child task"}' } }], usage: { prompt_tokens: 100, completion_tokens: 10 } }
}

describe('the final line', () => {
  it('counts a subagent\'s tokens and money into its parent\'s turn, once', async () => {
    const p = await setUp(delegating, { pricing: true, extraRows: ROWS })
    const run = await rein(p.dir, ['run', PROMPT])
    expect(run).toMatchObject({ code: 0, stdout: 'done\n' })
    // Parent 300 in / 30 out, child 30 in / 3 out; input 2 and output 8 per million tokens.
    const money = ((330 * 2 + 33 * 8) / 1e6).toPrecision(2)
    expect(run.stderr).toContain(`tokens in 330 out 33 (subagents in 30 out 3) · cost ${money} · completed\n`)
    const json = await rein(p.dir, ['run', '--json', PROMPT])
    const result = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string }).find((line) => line.type === 'result')
    expect(result).toMatchObject({ usage: { inputTokens: 300, outputTokens: 30 }, total: { usage: { inputTokens: 330, outputTokens: 33 }, subagents: { usage: { inputTokens: 30, outputTokens: 3 } } } })
  })

  it('marks the --json result total as estimated when a subagent\'s reply had no usage', async () => {
    const unreported = (request: RecordedRequest): MockReply => {
      if (lastMessage(request)?.content === 'child task') return { steps: [{ text: 'child answer' }], usage: null }
      return delegating(request)
    }
    const p = await setUp(unreported, { pricing: true, extraRows: ROWS })
    const json = await rein(p.dir, ['run', '--json', PROMPT])
    expect(json.code).toBe(0)
    const result = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string }).find((line) => line.type === 'result')
    expect(result).toMatchObject({ total: { usageEstimated: true, subagents: { usageEstimated: true } } })
  })

  it('adds what a background subagent spent after the turn ended, once its job settled', async () => {
    let turnOver: () => void = () => {}
    const turnEnded = new Promise<void>((resolve) => { turnOver = resolve })
    const script = (request: RecordedRequest): MockReply => {
      const last = lastMessage(request)
      // The child answers only once the parent's turn has ended (rein says it waits for the job): its spend comes after the final line.
      if (last?.role === 'user' && last.content === 'child task') return { steps: [{ waitFor: turnEnded }, { text: 'child answer' }], usage: { prompt_tokens: 5000, completion_tokens: 500 } }
      if (last?.role === 'tool') return { steps: [{ text: 'done' }], usage: { prompt_tokens: 200, completion_tokens: 20 } }
      return { steps: [{ toolCall: { id: 'b1', name: 'subagent', arguments: JSON.stringify({ description: 'helper', prompt: 'child task', run_in_background: true }) } }], usage: { prompt_tokens: 100, completion_tokens: 10 } }
    }
    const p = await setUp(script, { pricing: true, extraRows: [...ROWS, '- id: jobs', "  name: '@rein/jobs'", '- id: subagents', "  name: '@rein/subagents'"] })
    const run = await rein(p.dir, ['run', PROMPT], { onStderr: (text) => { if (text.includes('waiting for 1 background job')) turnOver() } })
    expect(run).toMatchObject({ code: 0, stdout: 'done\n' })
    expect(run.stderr).toContain('tokens in 300 out 30 · cost')
    // Parent 300 in / 30 out; the background child 5000 in / 500 out, at 2 and 8 per million tokens.
    expect(run.stderr).toContain(`with background work that ended after the turn: tokens in 5,300 out 530 · cost ${((5300 * 2 + 530 * 8) / 1e6).toFixed(4)}\n`)
  })

  it('says the money is unknown when a model used has no price', async () => {
    const p = await setUp(delegating, { extraRows: ROWS })
    const run = await rein(p.dir, ['run', PROMPT])
    expect(run.stderr).toContain('tokens in 330 out 33 (subagents in 30 out 3) · cost unknown (a model used has no price; set prices on the @rein/llm row) · completed\n')
  })
})

describe('OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  let collector: Server | undefined
  afterEach(() => {
    vi.unstubAllEnvs()
    return new Promise<void>((resolve) => (collector ? collector.close(() => resolve()) : resolve()))
  })

  it('exports the run\'s spans, the subagent\'s nested in the same trace, and no prompt', async () => {
    const bodies: { path: string; body: string }[] = []
    collector = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk: Buffer) => { body += chunk.toString() })
      request.on('end', () => {
        bodies.push({ path: request.url ?? '', body })
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      })
    })
    await new Promise<void>((resolve) => collector!.listen(0, '127.0.0.1', resolve))
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
    const p = await setUp(delegating, { pricing: true, extraRows: [...ROWS, '- id: otel', "  name: '@rein/otel-http'"] })
    // The plugin reads the process's environment, as `rein` run from a shell would give it.
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint)
    const run = await rein(p.dir, ['run', PROMPT])
    expect(run.code).toBe(0)
    const traces = bodies.filter((entry) => entry.path === '/v1/traces')
    expect(traces.length).toBeGreaterThan(0)
    interface Span { traceId: string; spanId: string; parentSpanId?: string; name: string }
    const spans = traces.flatMap((entry) => (JSON.parse(entry.body) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] }).resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans)))
    const named = (name: string) => spans.filter((span) => span.name === name)
    expect(named('invoke_agent main')).toHaveLength(2)
    const [tool] = named('execute_tool delegate')
    const child = named('invoke_agent main').find((span) => span.parentSpanId === tool!.spanId)
    expect(child?.traceId).toBe(tool!.traceId)
    expect(named('chat mock-model')).toHaveLength(3)
    expect(bodies.some((entry) => entry.path === '/v1/metrics')).toBe(true)
    for (const entry of bodies) expect(entry.body).not.toContain('marker-prompt-7f3a')
    // And no telemetry id reaches the model: the request prefix stays the same run to run.
    const sent = p.server.requests.map((request) => JSON.stringify(request.body)).join('\n')
    for (const span of spans) expect(sent).not.toContain(span.spanId)
    expect(sent).not.toContain(spans[0]!.traceId)
    expect(sent).not.toMatch(/run_[\w-]{16}/)
  })

  it('never holds up the answer when nobody listens there, and says so once on stderr', async () => {
    // A port nobody listens on: a server opened and closed again.
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const endpoint = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const p = await setUp(delegating, { extraRows: [...ROWS, '- id: otel', "  name: '@rein/otel-http'", '  config: { flushTimeoutMs: 200 }'] })
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint)
    const run = await rein(p.dir, ['run', PROMPT])
    expect(run).toMatchObject({ code: 0, stdout: 'done\n' })
    const warnings = run.stderr.split('\n').filter((line) => line.startsWith('[warn] otel-http: OTLP export of traces'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(endpoint)
  })

  it('sends no metrics with OTEL_METRICS_EXPORTER=none: against Jaeger (which answers 404 to metrics) a run says nothing', async () => {
    const paths: string[] = []
    collector = createServer((request, response) => {
      request.resume()
      request.on('end', () => {
        paths.push(request.url ?? '')
        if (request.url === '/v1/traces') response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
        else response.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found')
      })
    })
    await new Promise<void>((resolve) => collector!.listen(0, '127.0.0.1', resolve))
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
    const p = await setUp(delegating, { extraRows: [...ROWS, '- id: otel', "  name: '@rein/otel-http'"] })
    vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint)
    const noisy = await rein(p.dir, ['run', PROMPT])
    expect(noisy.stderr).toContain(`[warn] otel-http: OTLP export of metrics to ${endpoint} failed: the endpoint answered HTTP 404`)
    paths.length = 0
    vi.stubEnv('OTEL_METRICS_EXPORTER', 'none')
    const quiet = await rein(p.dir, ['run', PROMPT])
    expect(quiet).toMatchObject({ code: 0, stdout: 'done\n' })
    expect(quiet.stderr).not.toContain('[warn] otel-http')
    expect(paths.length).toBeGreaterThan(0)
    expect(new Set(paths)).toEqual(new Set(['/v1/traces']))
  })

  it('loads otel-http in the built-in composition for OTEL_EXPORTER_OTLP_TRACES_ENDPOINT alone, and sends traces to exactly that URL, without a warning', async () => {
    const llm = await startMockOpenAiServer(() => ({ steps: [{ text: 'done' }] }))
    const dir = mkdtempSync(join(tmpdir(), 'rein-otel-built-in-'))
    const paths: string[] = []
    collector = createServer((request, response) => {
      request.resume()
      request.on('end', () => {
        paths.push(request.url ?? '')
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      })
    })
    await new Promise<void>((resolve) => collector!.listen(0, '127.0.0.1', resolve))
    try {
      const traces = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/tempo/traces`
      // otel-http reads the process's environment; the built-in composition, rein's.
      vi.stubEnv('OTEL_EXPORTER_OTLP_ENDPOINT', '')
      vi.stubEnv('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', '')
      vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces)
      const run = await rein(dir, ['run', PROMPT], { env: { REIN_HOME: join(dir, 'home'), OPENAI_BASE_URL: llm.url, REIN_MODEL: 'mock-model', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: traces } })
      expect(run).toMatchObject({ code: 0, stdout: 'done\n' })
      expect(run.stderr).not.toContain('[warn] otel-http')
      expect(paths.length).toBeGreaterThan(0)
      // Metrics have no endpoint: none is sent, not even to <traces URL>/v1/metrics.
      expect(new Set(paths)).toEqual(new Set(['/tempo/traces']))
    } finally {
      await llm.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
