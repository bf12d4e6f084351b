/**
 * The GenAI client metrics (v1.41): `gen_ai.client.operation.duration` for every attempt and
 * `gen_ai.client.token.usage` for attempts that reported usage, with the conventions' buckets.
 */

import { ValueType, type Histogram, type Meter } from '@opentelemetry/api'
import type { LlmCallEndRecord } from '@rein/telemetry'
import { chatMetricAttributes, conventionInputTokens } from './attributes.ts'
import { ATTR, DURATION_BUCKETS, METRIC, TOKEN_BUCKETS } from './semconv.ts'

/** Records attempts into the two histograms. */
export class GenAiMetrics {
  private readonly duration: Histogram
  private readonly tokens: Histogram

  constructor(meter: Meter) {
    this.duration = meter.createHistogram(METRIC.operationDuration.name, {
      unit: METRIC.operationDuration.unit,
      description: METRIC.operationDuration.description,
      advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
    })
    this.tokens = meter.createHistogram(METRIC.tokenUsage.name, {
      unit: METRIC.tokenUsage.unit,
      description: METRIC.tokenUsage.description,
      valueType: ValueType.INT,
      advice: { explicitBucketBoundaries: [...TOKEN_BUCKETS] },
    })
  }

  /** One attempt: its duration in seconds, and its input and output tokens when the provider said. */
  recordChat(record: LlmCallEndRecord): void {
    const attributes = chatMetricAttributes(record)
    this.duration.record(Math.max(0, record.endedAt - record.startedAt) / 1000, attributes)
    if (!record.usage) return
    this.tokens.record(conventionInputTokens(record.usage), { ...attributes, [ATTR.tokenType]: 'input' })
    this.tokens.record(Math.round(record.usage.outputTokens), { ...attributes, [ATTR.tokenType]: 'output' })
  }
}
