/**
 * Reads captured OTLP/HTTP JSON bodies through the official protos (compiled by protobufjs, shipped
 * in @opentelemetry/otlp-transformer@0.216.0, aliased `otlp-proto`): the OTLP-JSON rules are
 * checked, the body is verified and round-tripped through binary protobuf, and tests assert on what
 * came back out — so a misspelt key or a wrong type fails the test instead of passing unseen.
 */

import generated from 'otlp-proto/build/src/generated/root.js'

interface ProtoType {
  verify(message: object): string | null
  fromObject(object: object): unknown
  encode(message: unknown): { finish(): Uint8Array }
  decode(bytes: Uint8Array): unknown
  toObject(message: unknown, options: object): Record<string, unknown>
}

interface ProtoRoot {
  opentelemetry: { proto: { collector: {
    trace: { v1: { ExportTraceServiceRequest: ProtoType } }
    metrics: { v1: { ExportMetricsServiceRequest: ProtoType } }
  } } }
}

// The generated module types itself as a bare protobufjs Root; its namespaces are plain properties.
const collector = (generated as unknown as ProtoRoot).opentelemetry.proto.collector
const TRACE_REQUEST = collector.trace.v1.ExportTraceServiceRequest
const METRICS_REQUEST = collector.metrics.v1.ExportMetricsServiceRequest

/** An attribute value as decoded, with the OTLP type it travelled as. */
export type AttributeType = 'string' | 'int' | 'double' | 'bool' | 'array'

/** One span, decoded. Ids are lowercase hex again. */
export interface DecodedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  /** 1 INTERNAL, 3 CLIENT. */
  kind: number
  startTimeUnixNano: bigint
  endTimeUnixNano: bigint
  /** 0 UNSET, 2 ERROR. */
  status: { code: number; message?: string }
  attributes: Record<string, unknown>
  types: Record<string, AttributeType>
  /** Attributes left out by the span's attribute count limit. */
  droppedAttributesCount: number
  resource: Record<string, unknown>
}

/** One histogram data point, decoded. */
export interface DecodedPoint {
  metric: string
  unit: string
  explicitBounds: number[]
  count: number
  sum: number
  attributes: Record<string, unknown>
  types: Record<string, AttributeType>
}

type Json = Record<string, unknown>

const INT64_KEYS = new Set(['startTimeUnixNano', 'endTimeUnixNano', 'timeUnixNano', 'observedTimeUnixNano', 'intValue', 'count', 'bucketCounts', 'asInt'])

/** Every span in `bodies`, after checking and verifying each body. Throws naming the first problem. */
export function decodeTraces(bodies: readonly string[]): DecodedSpan[] {
  return bodies.flatMap((body) => {
    const decoded = roundTrip(TRACE_REQUEST, body)
    return list(decoded.resourceSpans).flatMap((resourceSpans) => {
      const resource = attributesOf(list(record(resourceSpans.resource).attributes)).values
      return list(resourceSpans.scopeSpans).flatMap((scopeSpans) => list(scopeSpans.spans).map((span): DecodedSpan => {
        const { values, types } = attributesOf(list(span.attributes))
        const status = record(span.status)
        return {
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          ...(span.parentSpanId ? { parentSpanId: hex(span.parentSpanId) } : {}),
          name: String(span.name),
          kind: Number(span.kind ?? 0),
          startTimeUnixNano: BigInt(String(span.startTimeUnixNano)),
          endTimeUnixNano: BigInt(String(span.endTimeUnixNano)),
          status: { code: Number(status.code ?? 0), ...(typeof status.message === 'string' && status.message !== '' ? { message: status.message } : {}) },
          attributes: values,
          types,
          droppedAttributesCount: Number(span.droppedAttributesCount ?? 0),
          resource,
        }
      }))
    })
  })
}

/** Every histogram data point in `bodies`, after checking and verifying each body. */
export function decodeHistograms(bodies: readonly string[]): DecodedPoint[] {
  return bodies.flatMap((body) => {
    const decoded = roundTrip(METRICS_REQUEST, body)
    return list(decoded.resourceMetrics).flatMap((resourceMetrics) => list(resourceMetrics.scopeMetrics).flatMap((scopeMetrics) => list(scopeMetrics.metrics).flatMap((metric) => {
      const histogram = record(metric.histogram)
      return list(histogram.dataPoints).map((point): DecodedPoint => {
        const { values, types } = attributesOf(list(point.attributes))
        return {
          metric: String(metric.name),
          unit: typeof metric.unit === 'string' ? metric.unit : '',
          explicitBounds: (point.explicitBounds as number[] | undefined) ?? [],
          count: Number(point.count ?? 0),
          sum: Number(point.sum ?? 0),
          attributes: values,
          types,
        }
      })
    })))
  })
}

/** The OTLP-JSON rules, then `verify`, then JSON → protobuf → bytes → protobuf → object. */
function roundTrip(type: ProtoType, body: string): Json {
  const parsed = JSON.parse(body) as Json
  const problems = lint(parsed, '$')
  if (problems.length > 0) throw new Error(`not OTLP JSON:\n${problems.join('\n')}`)
  const problem = type.verify(forVerify(parsed) as object)
  if (problem !== null) throw new Error(`the official protos refuse the body: ${problem}`)
  const message = type.fromObject(forProto(parsed) as object)
  const back = type.decode(type.encode(message).finish())
  return type.toObject(back, { longs: String, enums: Number, bytes: String, defaults: false, arrays: true })
}

/** OTLP-JSON deviations from proto3 JSON: hex ids, integer enums, lowerCamelCase keys only. */
function lint(value: unknown, path: string): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => lint(item, `${path}[${index}]`))
  if (typeof value !== 'object' || value === null) return []
  return Object.entries(value).flatMap(([key, child]) => {
    const at = `${path}.${key}`
    const own: string[] = []
    if (key.includes('_')) own.push(`${at}: snake_case key`)
    if (key === 'traceId' && !/^[0-9a-f]{32}$/i.test(String(child)) || key === 'traceId' && /^0+$/.test(String(child))) own.push(`${at}: not 32 hex characters, or all zero`)
    if ((key === 'spanId' || key === 'parentSpanId') && child !== '' && (!/^[0-9a-f]{16}$/i.test(String(child)) || /^0+$/.test(String(child)))) own.push(`${at}: not 16 hex characters, or all zero`)
    if ((key === 'kind' || key === 'code') && !Number.isInteger(child)) own.push(`${at}: an enum must be an integer`)
    return [...own, ...lint(child, at)]
  })
}

/** `verify` checks 64-bit fields as numbers and bytes as base64. */
function forVerify(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => forVerify(item, key))
  if (typeof value === 'string' && INT64_KEYS.has(key) && /^-?\d+$/.test(value)) return Number(value)
  if (typeof value === 'string' && isIdKey(key)) return toBase64(value)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([child, inner]) => [child, forVerify(inner, child)]))
}

/** `fromObject` takes 64-bit strings as they are, bytes as base64. */
function forProto(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => forProto(item, key))
  if (typeof value === 'string' && isIdKey(key)) return toBase64(value)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([child, inner]) => [child, forProto(inner, child)]))
}

function isIdKey(key: string): boolean {
  return key === 'traceId' || key === 'spanId' || key === 'parentSpanId'
}

function toBase64(hexId: string): string {
  return Buffer.from(hexId, 'hex').toString('base64')
}

function hex(base64: unknown): string {
  return Buffer.from(String(base64), 'base64').toString('hex')
}

function attributesOf(attributes: Json[]): { values: Record<string, unknown>; types: Record<string, AttributeType> } {
  const values: Record<string, unknown> = {}
  const types: Record<string, AttributeType> = {}
  for (const attribute of attributes) {
    const key = String(attribute.key)
    const [type, value] = anyValue(record(attribute.value))
    values[key] = value
    types[key] = type
  }
  return { values, types }
}

function anyValue(value: Json): [AttributeType, unknown] {
  if ('stringValue' in value) return ['string', value.stringValue]
  if ('intValue' in value) return ['int', Number(value.intValue)]
  if ('doubleValue' in value) return ['double', value.doubleValue]
  if ('boolValue' in value) return ['bool', value.boolValue]
  if ('arrayValue' in value) return ['array', list(record(value.arrayValue).values).map((item) => anyValue(item)[1])]
  throw new Error(`an attribute value of no known type: ${JSON.stringify(value)}`)
}

function list(value: unknown): Json[] {
  return Array.isArray(value) ? (value as Json[]) : []
}

function record(value: unknown): Json {
  return typeof value === 'object' && value !== null ? (value as Json) : {}
}
