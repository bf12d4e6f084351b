/**
 * What the environment says of spans, as the SDK's tracer read it: which traces go
 * (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`) and how many attributes a span keeps
 * (`OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`, else `OTEL_ATTRIBUTE_COUNT_LIMIT`). A trace is decided once, at
 * its root run: every span in it is rein's own, so a child's decision is always its parent's, and
 * the parent-based samplers decide as their root ones.
 */

import { ROOT_CONTEXT } from '@opentelemetry/api'
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base'
import { shorten } from '@rein/base'

const SAMPLER_ENV = 'OTEL_TRACES_SAMPLER'
const SAMPLER_ARG_ENV = 'OTEL_TRACES_SAMPLER_ARG'
const COUNT_LIMIT_ENVS = ['OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT'] as const
/** The SDK's default attribute count limit. */
const DEFAULT_COUNT_LIMIT = 128

/** Whether a new trace is exported, by its id. */
type TraceSampler = (traceId: string) => boolean

/** How spans are sampled and limited, and a warning for each variable set to what it cannot mean. */
export interface TraceSettings {
  readonly sample: TraceSampler
  /** The most attributes one span keeps; later new keys are counted dropped. */
  readonly attributeCountLimit: number
  readonly warnings: readonly string[]
}

/** The settings `env` gives. */
export function traceSettings(env: NodeJS.ProcessEnv): TraceSettings {
  const sampler = samplerFrom(env)
  const limit = countLimitFrom(env)
  return {
    sample: sampler.value,
    attributeCountLimit: limit.value,
    warnings: [sampler.warning, limit.warning].filter((warning) => warning !== undefined),
  }
}

/** A setting as read, and the warning when its variable could not mean anything. */
interface Read<T> {
  value: T
  warning?: string
}

/** The sampler the environment names; one rein does not know keeps every trace, as the SDK does. */
function samplerFrom(env: NodeJS.ProcessEnv): Read<TraceSampler> {
  const given = env[SAMPLER_ENV]?.trim() ?? ''
  switch (given.toLowerCase()) {
    case '':
    case 'always_on':
    case 'parentbased_always_on':
      return { value: ALWAYS }
    case 'always_off':
    case 'parentbased_always_off':
      return { value: NEVER }
    case 'traceidratio':
    case 'parentbased_traceidratio':
      return ratioSampler(env[SAMPLER_ARG_ENV])
    default:
      return { value: ALWAYS, warning: `${SAMPLER_ENV}=${quoted(given)} is no sampler rein knows (always_on, always_off, traceidratio, or parentbased_ of them); every trace is exported` }
  }
}

const ALWAYS: TraceSampler = () => true
const NEVER: TraceSampler = () => false

/** The SDK's ratio sampler (by the trace id, so one trace is decided alike everywhere); a missing or bad ratio is 1. */
function ratioSampler(arg: string | undefined): Read<TraceSampler> {
  const text = arg?.trim() ?? ''
  const ratio = text === '' ? 1 : Number(text)
  const valid = Number.isFinite(ratio) && ratio >= 0 && ratio <= 1
  const sampler = new TraceIdRatioBasedSampler(valid ? ratio : 1)
  const sample: TraceSampler = (traceId) => sampler.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED
  return valid ? { value: sample } : { value: sample, warning: `${SAMPLER_ARG_ENV}=${quoted(text)} is no ratio from 0 to 1; every trace is exported` }
}

/** The first count limit variable set (the span one beats the general one); one that is no whole number is the default. */
function countLimitFrom(env: NodeJS.ProcessEnv): Read<number> {
  for (const name of COUNT_LIMIT_ENVS) {
    const text = env[name]?.trim() ?? ''
    if (text === '') continue
    const limit = Number(text)
    if (Number.isSafeInteger(limit) && limit >= 0) return { value: limit }
    return { value: DEFAULT_COUNT_LIMIT, warning: `${name}=${quoted(text)} is no whole number of attributes; spans keep up to ${DEFAULT_COUNT_LIMIT}` }
  }
  return { value: DEFAULT_COUNT_LIMIT }
}

/** A value from the environment, cut short: it is shown in a warning. */
function quoted(value: string): string {
  return JSON.stringify(shorten(value, 41))
}
