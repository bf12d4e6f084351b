/**
 * Checks a parsed stream event against the chunk shape `convert-stream.ts` reads, before it reads
 * it. Missing and null optional fields and unknown keys are fine (servers differ and add fields);
 * a field of the wrong type is `MALFORMED_RESPONSE` — never a TypeError, which would pass for a
 * transport failure and be retried.
 */

import { LlmError } from '@rein/llm'
import type { WireChunk } from './wire.ts'
import { shorten } from '@rein/base'

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const absent = (value: unknown) => value === undefined || value === null

/** `payload` as a `WireChunk`, or `MALFORMED_RESPONSE` naming the first field that is wrong. */
export function checkChunk(payload: unknown, provider: string): WireChunk {
  if (!isObject(payload)) throw malformed(provider, `a stream event that is not a JSON object (${describe(payload)})`)
  const { error } = payload
  if (!absent(error)) {
    if (typeof error === 'string') return payload as WireChunk
    if (!isObject(error)) wrong(provider, 'error', error, 'an object or a string')
    if (!optString(error.message)) wrong(provider, 'error.message', error.message, 'a string')
    if (!optString(error.type)) wrong(provider, 'error.type', error.type, 'a string')
    if (!absent(error.code) && typeof error.code !== 'string' && typeof error.code !== 'number') wrong(provider, 'error.code', error.code, 'a string or a number')
    return payload as WireChunk
  }
  if (!optString(payload.id)) wrong(provider, 'id', payload.id, 'a string')
  if (!optString(payload.model)) wrong(provider, 'model', payload.model, 'a string')
  const { choices, usage } = payload
  if (!absent(choices)) {
    if (!Array.isArray(choices)) wrong(provider, 'choices', choices, 'an array')
    for (let i = 0; i < choices.length; i++) checkChoice(provider, choices[i], i)
  }
  if (!absent(usage)) checkUsage(provider, usage)
  return payload as WireChunk
}

// Paths in messages are built only on failure: this runs for every event of every stream.
function checkChoice(provider: string, choice: unknown, i: number) {
  if (!isObject(choice)) wrong(provider, `choices[${i}]`, choice, 'an object')
  if (!optCount(choice.index)) wrong(provider, `choices[${i}].index`, choice.index, COUNT)
  if (!optString(choice.finish_reason)) wrong(provider, `choices[${i}].finish_reason`, choice.finish_reason, 'a string')
  const { delta } = choice
  if (absent(delta)) return
  if (!isObject(delta)) wrong(provider, `choices[${i}].delta`, delta, 'an object')
  if (!optString(delta.content)) wrong(provider, `choices[${i}].delta.content`, delta.content, 'a string')
  if (!optString(delta.reasoning_content)) wrong(provider, `choices[${i}].delta.reasoning_content`, delta.reasoning_content, 'a string')
  if (!optString(delta.reasoning)) wrong(provider, `choices[${i}].delta.reasoning`, delta.reasoning, 'a string')
  if (!optString(delta.refusal)) wrong(provider, `choices[${i}].delta.refusal`, delta.refusal, 'a string')
  const calls = delta.tool_calls
  if (absent(calls)) return
  if (!Array.isArray(calls)) wrong(provider, `choices[${i}].delta.tool_calls`, calls, 'an array')
  for (let j = 0; j < calls.length; j++) checkToolCall(provider, calls[j], i, j)
}

function checkToolCall(provider: string, call: unknown, i: number, j: number) {
  const at = () => `choices[${i}].delta.tool_calls[${j}]`
  if (!isObject(call)) wrong(provider, at(), call, 'an object')
  if (!optCount(call.index)) wrong(provider, `${at()}.index`, call.index, COUNT)
  if (!optString(call.id)) wrong(provider, `${at()}.id`, call.id, 'a string')
  const fn = call.function
  if (absent(fn)) return
  if (!isObject(fn)) wrong(provider, `${at()}.function`, fn, 'an object')
  if (!optString(fn.name)) wrong(provider, `${at()}.function.name`, fn.name, 'a string')
  // Arguments are text; a server that sends an object gets it re-serialized, anything else is wrong.
  if (!optString(fn.arguments) && !isObject(fn.arguments)) wrong(provider, `${at()}.function.arguments`, fn.arguments, 'a string')
}

function checkUsage(provider: string, usage: unknown) {
  if (!isObject(usage)) wrong(provider, 'usage', usage, 'an object')
  if (!optTokens(usage.prompt_tokens)) wrong(provider, 'usage.prompt_tokens', usage.prompt_tokens, TOKENS)
  if (!optTokens(usage.completion_tokens)) wrong(provider, 'usage.completion_tokens', usage.completion_tokens, TOKENS)
  if (!optTokens(usage.prompt_cache_hit_tokens)) wrong(provider, 'usage.prompt_cache_hit_tokens', usage.prompt_cache_hit_tokens, TOKENS)
  const prompt = usage.prompt_tokens_details
  if (!absent(prompt)) {
    if (!isObject(prompt)) wrong(provider, 'usage.prompt_tokens_details', prompt, 'an object')
    if (!optTokens(prompt.cached_tokens)) wrong(provider, 'usage.prompt_tokens_details.cached_tokens', prompt.cached_tokens, TOKENS)
  }
  const completion = usage.completion_tokens_details
  if (!absent(completion)) {
    if (!isObject(completion)) wrong(provider, 'usage.completion_tokens_details', completion, 'an object')
    if (!optTokens(completion.reasoning_tokens)) wrong(provider, 'usage.completion_tokens_details.reasoning_tokens', completion.reasoning_tokens, TOKENS)
  }
}

const COUNT = 'a whole number ≥ 0'
const optString = (value: unknown) => value === undefined || value === null || typeof value === 'string'
const optCount = (value: unknown) => value === undefined || value === null || (typeof value === 'number' && Number.isInteger(value) && value >= 0)
// Token counts are summed across answers: one past 2^53 is not exact, and two near 1e308 sum to Infinity, which no log stores.
const TOKENS = 'a whole number of tokens below 2^53'
const optTokens = (value: unknown) => value === undefined || value === null || tokenCount(value) !== undefined
const DIGITS = /^[0-9]+$/

/**
 * A usage count as a number, or undefined when it is none. Some servers and proxies send counts as
 * strings (`"prompt_tokens": "12"`): plain decimal digits are that count, not a reason to lose the answer.
 */
export function tokenCount(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined
  if (typeof value !== 'string' || !DIGITS.test(value)) return undefined
  const count = Number(value)
  return Number.isSafeInteger(count) ? count : undefined
}

function wrong(provider: string, path: string, value: unknown, expected: string): never {
  throw malformed(provider, `a stream event whose ${path} is ${describe(value)}, not ${expected}`)
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `the string ${JSON.stringify(shorten(value, 41))}`
  if (typeof value === 'object') return 'an object'
  return `${typeof value} ${JSON.stringify(value)}`
}

export function malformed(provider: string, what: string): LlmError {
  return new LlmError({ code: 'MALFORMED_RESPONSE', message: `${provider} sent ${what}` })
}
