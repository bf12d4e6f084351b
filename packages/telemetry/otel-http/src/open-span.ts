/**
 * A span built straight from records, ended into the SDK's span processor as a `ReadableSpan`.
 * Records arrive complete, with their own times and an explicit parent: the SDK's tracer (context
 * lookup, sampler, live-span bookkeeping) would do nothing for them but cost every span its work,
 * and its compilation in a short run. The batching, the OTLP encoding and the export stay the SDK's.
 */

import { SpanStatusCode, TraceFlags, type AttributeValue, type Attributes, type HrTime, type SpanContext, type SpanKind, type SpanStatus } from '@opentelemetry/api'
import type { Resource } from '@opentelemetry/resources'
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { cutHead } from '@rein/base'
import type { TraceSettings } from './trace-settings.ts'

/**
 * The longest attribute value exported, in characters (64 Ki); longer strings are cut. Only content
 * comes near it: one huge tool result must not make a batch too large for a collector.
 */
export const MAX_ATTRIBUTE_CHARS = 64 * 1024

/** Where ended spans go, what every span carries (the resource and the instrumentation scope), and which traces go. */
export interface SpanOutput {
  readonly processor: SpanProcessor
  readonly resource: Resource
  readonly scope: { readonly name: string }
  readonly settings: Pick<TraceSettings, 'sample' | 'attributeCountLimit'>
}

const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET })

/** One span from its start record to its end record. */
export class OpenSpan {
  private readonly attributes: Attributes = {}
  private attributeCount = 0
  private droppedAttributes = 0
  private status: SpanStatus = UNSET

  /**
   * `context` holds its ids and whether its trace is sampled; a child's `parent` is its parent's.
   * It keeps `attributeLimit` attributes at most.
   */
  constructor(
    private name: string,
    private readonly kind: SpanKind,
    private readonly startedAt: number,
    attributes: Attributes,
    readonly context: SpanContext,
    private readonly parent: SpanContext | undefined,
    private readonly attributeLimit: number,
  ) {
    this.setAttributes(attributes)
  }

  /** Whether its trace is exported: content is read only for one that is. */
  get sampled(): boolean {
    return (this.context.traceFlags & TraceFlags.SAMPLED) !== 0
  }

  /**
   * Adds `attributes`, over any of the same key, as the SDK's span would: a value that is no
   * attribute value adds nothing, a long string is cut, and a new key past the limit is dropped.
   */
  setAttributes(attributes: Attributes): void {
    for (const key of Object.keys(attributes)) {
      const value = attributes[key]
      if (!isAttributeValue(value) || key === '') continue
      if (!Object.hasOwn(this.attributes, key)) {
        if (this.attributeCount >= this.attributeLimit) {
          this.droppedAttributes++
          continue
        }
        this.attributeCount++
      }
      this.attributes[key] = limited(value)
    }
  }

  setStatus(status: SpanStatus): void {
    this.status = status
  }

  rename(name: string): void {
    this.name = name
  }

  /** Ends the span at `endedAt` (epoch ms) into `output`'s processor; unsampled, or with no output (traces off), it goes nowhere. */
  end(endedAt: number, output: SpanOutput | undefined): void {
    if (output === undefined || !this.sampled) return
    // An end before the start (clocks) ends at the start, as the SDK's span does.
    const elapsed = Math.max(0, endedAt - this.startedAt)
    const { context } = this
    const span: ReadableSpan = {
      name: this.name,
      kind: this.kind,
      spanContext: () => context,
      startTime: hrTime(this.startedAt),
      endTime: hrTime(this.startedAt + elapsed),
      status: this.status,
      attributes: this.attributes,
      links: [],
      events: [],
      duration: hrTime(elapsed),
      ended: true,
      resource: output.resource,
      instrumentationScope: output.scope,
      droppedAttributesCount: this.droppedAttributes,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
      // Last: a key after a spread is slow on Node 20 (docs/architecture.md, Conventions).
      ...(this.parent !== undefined ? { parentSpanContext: this.parent } : {}),
    }
    output.processor.onEnd(span)
  }
}

/** A string, number or boolean, or an array of them: what OTLP carries as an attribute (no objects, no null). */
function isAttributeValue(value: unknown): value is AttributeValue {
  return isScalar(value) || (Array.isArray(value) && value.every((each) => each === null || each === undefined || isScalar(each)))
}

function isScalar(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
}

/** Strings (in an array too) cut to `MAX_ATTRIBUTE_CHARS`, as the SDK's span limit would; others as they are. */
function limited(value: AttributeValue): AttributeValue {
  if (typeof value === 'string') return cut(value)
  if (Array.isArray(value) && value.some((each) => typeof each === 'string' && each.length > MAX_ATTRIBUTE_CHARS)) {
    return value.map((each) => (typeof each === 'string' ? cut(each) : each)) as AttributeValue
  }
  return value
}

/** Cut between characters: half an emoji is no well-formed text, and a collector may refuse the batch. */
function cut(text: string): string {
  return text.length > MAX_ATTRIBUTE_CHARS ? cutHead(text, MAX_ATTRIBUTE_CHARS) : text
}

/** Epoch (or elapsed) milliseconds as `[seconds, nanoseconds]`: never mistaken for a `performance.now()` reading. */
function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000)
  const nanos = Math.round((ms - seconds * 1000) * 1e6)
  return nanos >= 1e9 ? [seconds + 1, nanos - 1e9] : [seconds, nanos]
}
