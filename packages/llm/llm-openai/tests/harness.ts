// Boots @rein/llm and the OpenAI-compatible plugin against the testkit's mock server.
import { Context } from '@deepseek-ai/cordis'
import LlmRuntime, { BlockAssembler, userMessage, type LlmEvent, type LlmRequest, type LlmRuntimeConfig, type StreamChunk } from '@rein/llm'
import { startMockOpenAiServer, type MockScript, type MockServer } from '@rein/testkit'
import * as openai from '../src/index.ts'

export const KEY = 'sk-test-abcdef0123456789'

const servers: MockServer[] = []

/** Closes every server `boot` started; call from afterEach. */
export async function closeServers() {
  await Promise.all(servers.splice(0).map((server) => server.close()))
}

export async function serve(script: MockScript) {
  const server = await startMockOpenAiServer(script)
  servers.push(server)
  return server
}

export async function boot(script: MockScript, config: Partial<openai.Config> = {}, runtime: Partial<LlmRuntimeConfig> & { maxRetries?: number } = {}) {
  const server = await serve(script)
  const root = new Context()
  const { maxRetries = 2, ...rest } = runtime
  const llm = await root.plugin(LlmRuntime, { retry: { maxRetries, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 5 }, ...rest })
  const provider = await root.plugin(openai, { baseURL: server.url, apiKeyEnv: 'REIN_TEST_OPENAI_KEY', label: 'OpenAI', ...config })
  return { root, server, provider, llm }
}

/** A root with the runtime (no waits between retries, `maxRetries` of them) and this plugin at `baseURL`, without a mock server. */
export async function bootAt(baseURL: string, config: Partial<openai.Config> = {}, maxRetries = 0) {
  const root = new Context()
  await root.plugin(LlmRuntime, { retry: { maxRetries, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } })
  await root.plugin(openai, { baseURL, apiKeyEnv: false, ...config })
  return root
}

export interface Run {
  chunks: StreamChunk[]
  events: LlmEvent[]
  blocks: ReturnType<BlockAssembler['blocks']>
  finish: Extract<StreamChunk, { type: 'finish' }>
}

/** Streams one request to the end; `onChunk` runs for every chunk (a slow consumer awaits in it). */
export async function run(root: Context, request: Partial<LlmRequest> = {}, onChunk?: (chunk: StreamChunk) => unknown): Promise<Run> {
  const events: LlmEvent[] = []
  const chunks: StreamChunk[] = []
  const assembler = new BlockAssembler()
  for await (const chunk of root.llm.stream({ provider: 'openai', model: 'gpt-test', messages: [userMessage('hi', 'u1')], onEvent: (event) => { if (event.type !== 'attempt-start') events.push(event) }, ...request })) {
    chunks.push(chunk)
    assembler.push(chunk)
    await onChunk?.(chunk)
  }
  return { chunks, events, blocks: assembler.blocks(), finish: chunks.at(-1) as Run['finish'] }
}
