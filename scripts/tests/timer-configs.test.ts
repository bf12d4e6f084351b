// A Config value in milliseconds reaches a Node timer (setTimeout, AbortSignal.timeout), which
// cannot wait past 2^31−1 ms: past it, Node fires at once (up to 2^32−1) or throws. Every plugin's
// Config must refuse such a value at load, with the field named, rather than fail each request.
import { describe, expect, it } from 'vitest'

const PACKAGES = [
  'core/agent', 'core/checkpoint', 'core/jobs', 'core/llm', 'core/memory', 'core/subagents', 'core/telemetry', 'core/tools',
  'llm/llm-deepseek', 'llm/llm-openai', 'store/checkpoint-jsonl', 'store/memory-sqlite', 'store/session-jsonl',
  'telemetry/otel-http', 'tool/tool-bash', 'tool/tool-fs',
]

/** Fields in ms no timer waits on as they are: the retry delays are cut to 2^31−1 where used, a cooldown is compared with the clock. */
const NOT_A_TIMER = new Set(['core/llm: retry.initialDelayMs', 'core/llm: retry.maxDelayMs', 'core/llm: retry.retryAfterCapMs', 'core/llm: fallbackCooldownMs'])

const PAST_TIMERS = 2 ** 31

/** What is read of a schemastery schema: it checks a value, and holds its fields (`dict`) and members. */
interface Schema {
  (value: unknown): unknown
  dict?: Record<string, Schema | undefined>
  list?: Schema[]
  inner?: Schema
}

/** Every `…Ms` field of `schema`, by its path, with the schema that checks it. */
function msFields(schema: Schema, path: string[] = []): [string, Schema][] {
  const found: [string, Schema][] = []
  for (const [key, inner] of Object.entries(schema.dict ?? {})) {
    if (inner === undefined) continue
    if (key.endsWith('Ms')) found.push([[...path, key].join('.'), inner])
    found.push(...msFields(inner, [...path, key]))
  }
  for (const member of schema.list ?? []) found.push(...msFields(member, path))
  if (schema.inner) found.push(...msFields(schema.inner, path))
  return found
}

async function configOf(pkg: string): Promise<Schema> {
  const module = await import(/* @vite-ignore */ new URL(`../../packages/${pkg}/src/index.ts`, import.meta.url).href) as { Config?: Schema; default?: { Config?: Schema } }
  const config = module.Config ?? module.default?.Config
  if (!config) throw new Error(`${pkg} exports no Config`)
  return config
}

describe('a Config value in milliseconds past what a timer can wait', () => {
  it('is looked for in every field in ms, nested ones too', async () => {
    const found = (await Promise.all(PACKAGES.map(async (pkg) => msFields(await configOf(pkg)).map(([path]) => `${pkg}: ${path}`)))).flat()
    expect(found).toEqual(expect.arrayContaining(['core/jobs: killGraceMs', 'core/llm: retry.maxDelayMs', 'tool/tool-bash: defaultTimeoutMs', 'store/session-jsonl: batchDelayMs']))
  })

  it.each(PACKAGES)('is refused by %s for every field a timer waits on', async (pkg) => {
    const accepted: string[] = []
    for (const [path, schema] of msFields(await configOf(pkg))) {
      if (NOT_A_TIMER.has(`${pkg}: ${path}`)) continue
      try {
        schema(PAST_TIMERS)
        accepted.push(path)
      } catch {
        // Refused, as it should be.
      }
    }
    expect(accepted).toEqual([])
  })
})
