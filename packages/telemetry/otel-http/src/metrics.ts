/**
 * The GenAI client metrics (v1.41): `gen_ai.client.operation.duration` for every attempt and
 * `gen_ai.client.token.usage` for attempts whose provider reported usage (never rein's estimates),
 * with the conventions' buckets.
 */

import { ValueType, type Histogram, type Meter } from '@opentelemetry/api'
import type { LlmCallEndRecord } from '@rein/telemetry'
import { chatMetricAttributes, conventionInputTokens, reportedUsage } from './attributes.ts'
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

  /** One attempt: its duration in seconds (with `error.type` on failure), and its input and output tokens when the provider said. */
  recordChat(record: LlmCallEndRecord): void {
    const attributes = chatMetricAttributes(record)
    this.duration.record(Math.max(0, record.endedAt - record.startedAt) / 1000,
      record.errorCode !== undefined ? { [ATTR.errorType]: record.errorCode, ...attributes } : attributes)
    // The conventions: usage that cannot be obtained is not reported (an estimate is not obtained).
    const usage = reportedUsage(record)
    if (!usage) return
    // The added key first (no other has it): not a spread-first literal, slow on Node 20
    // (docs/architecture.md, Conventions).
    this.tokens.record(conventionInputTokens(usage), { [ATTR.tokenType]: 'input', ...attributes })
    this.tokens.record(Math.round(usage.outputTokens), { [ATTR.tokenType]: 'output', ...attributes })
  }
}
