/**
 * Which traces are exported, from `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` as the SDK
 * spec defines them. A trace is decided once, at its root run: every span in it is rein's own, so a
 * child's decision is always its parent's, and the parent-based samplers decide as their root ones.
 */

import { ROOT_CONTEXT } from '@opentelemetry/api'
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base'

const SAMPLER_ENV = 'OTEL_TRACES_SAMPLER'
const SAMPLER_ARG_ENV = 'OTEL_TRACES_SAMPLER_ARG'

/** Whether a new trace is exported, by its id. */
export type TraceSampler = (traceId: string) => boolean

/** The sampler the environment names, and a warning when it names one rein does not know (then every trace is kept, as the SDK does). */
export function samplerFromEnvironment(env: NodeJS.ProcessEnv): { sample: TraceSampler; warning?: string } {
  const raw = env[SAMPLER_ENV]?.trim().toLowerCase() ?? ''
  switch (raw) {
    case '':
    case 'always_on':
    case 'parentbased_always_on':
      return { sample: ALWAYS }
    case 'always_off':
    case 'parentbased_always_off':
      return { sample: NEVER }
    case 'traceidratio':
    case 'parentbased_traceidratio':
      return ratioSampler(env[SAMPLER_ARG_ENV])
    default:
      return { sample: ALWAYS, warning: `${SAMPLER_ENV}=${quoted(raw)} is no sampler rein knows (always_on, always_off, traceidratio, or parentbased_ of them); every trace is exported` }
  }
}

const ALWAYS: TraceSampler = () => true
const NEVER: TraceSampler = () => false

/** The SDK's ratio sampler (by the trace id, so one trace is decided alike everywhere); a missing or bad ratio is 1. */
function ratioSampler(arg: string | undefined): { sample: TraceSampler; warning?: string } {
  const text = arg?.trim() ?? ''
  const ratio = text === '' ? 1 : Number(text)
  const valid = Number.isFinite(ratio) && ratio >= 0 && ratio <= 1
  const sampler = new TraceIdRatioBasedSampler(valid ? ratio : 1)
  const sample: TraceSampler = (traceId) => sampler.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED
  return valid ? { sample } : { sample, warning: `${SAMPLER_ARG_ENV}=${quoted(text)} is no ratio from 0 to 1; every trace is exported` }
}

/** A value from the environment, cut short: it is shown in a warning. */
function quoted(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
}
