// Found by the soak fuzzer (suite 3): tool-call arguments sent as an object nested thousands of levels
// deep (JSON.parse reads them fine) made the translator throw a RangeError from JSON.stringify,
// which the runtime takes for a transport failure and retries.
import { isReinError } from '@rein/base'
import { describe, expect, it } from 'vitest'
import { createChunkTranslator } from '../src/index.ts'

const deep = (levels: number) => JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`) as unknown

describe('tool-call arguments sent as a deeply nested object', () => {
  it('fail as MALFORMED_RESPONSE, not with a RangeError', () => {
    const translator = createChunkTranslator('Test')
    const payload = { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: deep(100_000) } }] } }] }
    let caught: unknown
    try {
      translator.push(payload)
    } catch (error) {
      caught = error
    }
    expect(isReinError(caught) ? caught.code : caught).toBe('MALFORMED_RESPONSE')
  })

  it('are still re-serialized when merely nested', () => {
    const translator = createChunkTranslator('Test')
    const [, delta] = translator.push({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: deep(50) } }] } }] })
    expect(delta).toMatchObject({ type: 'tool-call-delta', argumentsDelta: `${'{"a":'.repeat(50)}1${'}'.repeat(50)}` })
  })
})
