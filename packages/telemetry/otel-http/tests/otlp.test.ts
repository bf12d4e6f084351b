// The test-side verifier itself: a body breaking OTLP JSON or the official protos is refused, not read.
import { describe, expect, it } from 'vitest'
import { decodeTraces } from './otlp.ts'

const SPAN = {
  traceId: '5de4d6cef621184ab2f3ca32f269436d', spanId: '275e28cf8c043ab2', name: 'chat m', kind: 3,
  startTimeUnixNano: '1795949596914000000', endTimeUnixNano: '1795949596914448345',
  attributes: [{ key: 'gen_ai.usage.input_tokens', value: { intValue: 12 } }], status: { code: 0 },
}

function body(span: Record<string, unknown>): string {
  return JSON.stringify({ resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 't' }, spans: [span] }] }] })
}

describe('the OTLP verifier', () => {
  it('reads a well-formed body back', () => {
    expect(decodeTraces([body(SPAN)])).toMatchObject([{ traceId: SPAN.traceId, spanId: SPAN.spanId, kind: 3, attributes: { 'gen_ai.usage.input_tokens': 12 }, types: { 'gen_ai.usage.input_tokens': 'int' } }])
  })

  it.each([
    ['a base64 trace id', { traceId: Buffer.from(SPAN.traceId, 'hex').toString('base64') }, 'not 32 hex'],
    ['an enum as a name', { kind: 'SPAN_KIND_CLIENT' }, 'enum must be an integer'],
    ['a snake_case key', { start_time_unix_nano: SPAN.startTimeUnixNano }, 'snake_case'],
    ['an int that is not one', { attributes: [{ key: 'n', value: { intValue: '12x' } }] }, 'refuse'],
    ['a misspelt value type', { attributes: [{ key: 'n', value: { stringVal: 'x' } }] }, 'no known type'],
  ])('refuses %s', (_label, change, problem) => {
    expect(() => decodeTraces([body({ ...SPAN, ...change })])).toThrow(problem)
  })
})
