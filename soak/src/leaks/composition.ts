/**
 * A leak-suite composition: every store and tool rein ships, telemetry exported to a local OTLP
 * endpoint, the key read from a variable of its own.
 */

import { writeFileSync } from 'node:fs'

/** The variable llm-openai reads the key from. */
export const KEY_ENV = 'REIN_LEAK_API_KEY'

/** What differs between the suite's compositions. */
export interface CompositionOptions {
  /** The mock provider's base URL (with `/v1`). */
  baseURL: string
  /** The OTLP endpoint. */
  otlp: string
  captureContent: boolean
  /** The agent's system prompt. */
  system: string
}

/** Writes a cordis.yml composing llm + llm-openai, tools, sessions, memory, checkpoints, telemetry. */
export function writeComposition(file: string, options: CompositionOptions): void {
  const rows = [
    ['llm', '@rein/llm', '{ retry: { maxRetries: 2, initialDelayMs: 0, maxDelayMs: 0, jitter: 0, retryAfterCapMs: 0 } }'],
    ['model', '@rein/llm-openai', `{ provider: mock, label: mock, baseURL: '${options.baseURL}', apiKeyEnv: ${KEY_ENV} }`],
    ['tools', '@rein/tools'],
    ['sessions', '@rein/session'],
    ['session-store', '@rein/session-jsonl'],
    ['memory', '@rein/memory'],
    ['memory-store', '@rein/memory-sqlite'],
    ['checkpoints', '@rein/checkpoint'],
    ['checkpoint-store', '@rein/checkpoint-jsonl'],
    ['telemetry', '@rein/telemetry'],
    ['otel', '@rein/otel-http', `{ endpoint: '${options.otlp}', captureContent: ${options.captureContent}, flushTimeoutMs: 10000 }`],
    ['agents', '@rein/agent', JSON.stringify({ provider: 'mock', model: 'mock-model', system: options.system })],
    ['fs', '@rein/tool-fs'],
    ['jobs', '@rein/jobs'],
    ['bash', '@rein/tool-bash'],
  ]
  const yml = rows.flatMap(([id, name, config]) => [`- id: ${id}`, `  name: '${name}'`, ...(config ? [`  config: ${config}`] : [])])
  writeFileSync(file, `${yml.join('\n')}\n`)
}
