// Seeded fuzzing of the chunk translator: whatever JSON a server sends, the translator either
// translates it or throws a ReinError; a plain TypeError would be misread as a transport failure.
import { isReinError } from '@rein/base'
import fc, { type JsonValue } from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createChunkTranslator } from '../src/index.ts'

const valid: JsonValue[] = [
  { id: 'c1', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }], usage: null },
  { id: 'c1', model: 'm', choices: [{ index: 0, delta: { content: 'Hel', reasoning_content: null }, finish_reason: null }] },
  { id: 'c1', model: 'm', choices: [{ index: 0, delta: { reasoning: 'hm' }, finish_reason: null }] },
  { id: 'c1', model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read', arguments: '' } }] }, finish_reason: null }] },
  { id: 'c1', model: 'm', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"p":1}' } }] }, finish_reason: null }] },
  { id: 'c1', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 9, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 1 }, completion_tokens_details: { reasoning_tokens: 0 } } },
  { id: 'c1', model: 'm', choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, prompt_cache_hit_tokens: 3, prompt_cache_miss_tokens: 6 } },
  { error: { message: 'boom', type: 'server_error', code: null } },
]

type Path = (string | number)[]

/** Every path into a JSON value, the root included. */
function paths(value: JsonValue, prefix: Path = []): Path[] {
  const out: Path[] = [prefix]
  if (Array.isArray(value)) value.forEach((item, index) => out.push(...paths(item, [...prefix, index])))
  else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) if (item !== undefined) out.push(...paths(item, [...prefix, key]))
  return out
}

/** A copy of `value` with the node at `path` replaced (or removed when `replacement` is undefined). */
function mutate(value: JsonValue, path: Path, replacement: JsonValue | undefined): JsonValue | undefined {
  if (path.length === 0) return replacement
  const [head, ...rest] = path
  if (Array.isArray(value)) {
    const copy = [...value]
    const next = mutate(copy[head as number]!, rest, replacement)
    if (next === undefined) copy.splice(head as number, 1)
    else copy[head as number] = next
    return copy
  }
  const copy = { ...(value as Record<string, JsonValue>) }
  const next = mutate(copy[head as string]!, rest, replacement)
  if (next === undefined) delete copy[head as string]
  else copy[head as string] = next
  return copy
}

const mutation = fc.integer({ min: 0, max: valid.length - 1 }).chain((which) => {
  const base = valid[which]!
  const all = paths(base)
  return fc.tuple(fc.constant(base), fc.integer({ min: 0, max: all.length - 1 }).map((i) => all[i]!), fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined }))
    .map(([value, path, replacement]) => mutate(value, path, replacement) ?? null)
})

const payload = fc.oneof(fc.jsonValue({ maxDepth: 4 }), mutation, mutation, fc.constantFrom(...valid))

/** Pushes the payloads, then ends the stream; returns what escaped that was not a ReinError. */
function escapes(payloads: readonly JsonValue[], sawDone: boolean): unknown {
  const translator = createChunkTranslator('Fuzz')
  try {
    for (const item of payloads) translator.push(item)
    translator.end(sawDone)
  } catch (error) {
    return isReinError(error) ? undefined : error
  }
  return undefined
}

describe('createChunkTranslator under fuzzing', () => {
  it('throws nothing but ReinErrors over thousands of random and mutated chunks (seeded)', () => {
    let payloads = 0
    const stray: unknown[] = []
    fc.assert(fc.property(fc.array(payload, { minLength: 1, maxLength: 8 }), fc.boolean(), (sequence, sawDone) => {
      payloads += sequence.length
      const escaped = escapes(sequence, sawDone)
      if (escaped !== undefined) stray.push(escaped)
      return escaped === undefined
    }), { seed: 20_261_201, numRuns: 4_000, endOnFailure: true })
    expect(stray).toEqual([])
    expect(payloads).toBeGreaterThan(10_000)
  })
})
