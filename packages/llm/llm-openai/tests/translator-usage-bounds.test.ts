// Found by the soak fuzzer (suite 3, soak/corpus/translator): a usage count no real server sends
// (1e308 tokens, or 2^53 and past, where integers stop being exact) was passed on as usage, and two
// such answers sum to Infinity tokens, which no session log can store.
import { isReinError } from '@rein/base'
import { describe, expect, it } from 'vitest'
import { createChunkTranslator } from '../src/index.ts'

const usage = (fields: Record<string, unknown>) => ({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, ...fields } })

function code(payload: unknown) {
  try {
    createChunkTranslator('Test').push(payload)
    return 'accepted'
  } catch (error) {
    return isReinError(error) ? error.code : error
  }
}

describe('usage counts past what an integer holds exactly', () => {
  it.each([
    ['prompt_tokens', { prompt_tokens: 1e308 }],
    ['completion_tokens', { completion_tokens: 2 ** 53 }],
    ['cached_tokens', { prompt_tokens_details: { cached_tokens: 9007199254740992 } }],
    ['reasoning_tokens', { completion_tokens_details: { reasoning_tokens: 1e300 } }],
  ])('fail as MALFORMED_RESPONSE: %s', (_field, fields) => {
    expect(code(usage(fields))).toBe('MALFORMED_RESPONSE')
  })

  it('are accepted up to the largest exact integer', () => {
    expect(code(usage({ prompt_tokens: Number.MAX_SAFE_INTEGER }))).toBe('accepted')
  })
})
