/**
 * The `bash` tool's value (canonical JSON), what the model reads from it, and the cards a UI shows.
 * Formatting for people stays in the presenters; `render` is the model's text.
 */

import { groupDigits, shorten, type FrozenJson, type JsonValue } from '@rein/base'
import { leftOut, spillPreview, type DurableToolResult, type SpillExcerpt, type ToolCallView, type ToolResultView, type ValueSpec } from '@rein/tools'
import type { CollectedOutput } from './output-collector.ts'
import type { ShellExit } from './shell.ts'
import { capNote, formatBytes } from './spill-sink.ts'

/** How a command that ran in the foreground ended, with its output. */
const FINISHED = {
  type: 'object',
  additionalProperties: false,
  properties: {
    /** The whole output, or its preview when long; one trailing newline dropped. */
    output: { type: 'string', required: true },
    exitCode: { oneOf: [{ type: 'integer' }, { type: 'null' }], required: true },
    signal: { oneOf: [{ type: 'string' }, { type: 'null' }], required: true },
    timedOut: { type: 'boolean', required: true },
    cancelled: { type: 'boolean', required: true },
    /** The limit that applied, in ms. */
    timeoutMs: { type: 'integer', required: true },
    /** Processes left running when the command ended, and stopped. */
    leftovers: { type: 'integer', required: true },
    /** The file holding the whole output when it was too long to show; else null. */
    outputPath: { oneOf: [{ type: 'string' }, { type: 'null' }], required: true },
    truncated: { type: 'boolean', required: true },
    /** Present when the output outgrew the file's cap: the cap, in bytes… */
    outputFileCap: { type: 'integer' },
    /** …and how many bytes came after it and are in no file. */
    unsavedBytes: { type: 'integer' },
  },
} as const

/** A command started as a background job: the handle `ctx.jobs.start` returned. */
const STARTED = {
  type: 'object',
  additionalProperties: false,
  properties: {
    kind: { type: 'string', const: 'background', required: true },
    jobId: { type: 'string', required: true },
    outputPath: { oneOf: [{ type: 'string' }, { type: 'null' }], required: true },
  },
} as const

/** The value schema: a finished command, or a started background job. */
export const BASH_VALUE = { oneOf: [FINISHED, STARTED] } as const satisfies ValueSpec

/** A command that ran to its end: what the model reads, and how it ended. */
export interface FinishedValue {
  output: string
  exitCode: number | null
  signal: string | null
  timedOut: boolean
  cancelled: boolean
  timeoutMs: number
  leftovers: number
  outputPath: string | null
  truncated: boolean
  /** The output outgrew the file: it holds only the first `outputFileCap` bytes, `unsavedBytes` more were not saved. */
  outputFileCap?: number
  unsavedBytes?: number
}

/** A command started as a background job. */
export interface StartedValue {
  kind: 'background'
  jobId: string
  outputPath: string | null
}

/** What the `bash` tool returns. */
export type BashValue = FinishedValue | StartedValue

/** The value for a command that ran to its end. */
export function finishedValue(exit: ShellExit, output: CollectedOutput, timeoutMs: number): FinishedValue {
  const capped = output.kind === 'excerpt' && output.unsavedBytes > 0 && 'path' in output.saved
    ? { path: output.saved.path, outputFileCap: output.fileCap, unsavedBytes: output.unsavedBytes }
    : undefined
  const text = output.kind === 'whole' ? output.text
    : capped ? cappedPreview(output.excerpt, capped.path, capped.outputFileCap)
    : spillPreview(output.excerpt, output.saved, 'output')
  return {
    output: text.endsWith('\n') ? text.slice(0, -1) : text,
    exitCode: exit.exitCode,
    signal: exit.signal,
    timedOut: exit.timedOut,
    cancelled: exit.cancelled,
    timeoutMs,
    leftovers: exit.leftovers,
    outputPath: output.kind === 'excerpt' && 'path' in output.saved ? output.saved.path : null,
    truncated: output.kind === 'excerpt',
    ...(capped ? { outputFileCap: capped.outputFileCap, unsavedBytes: capped.unsavedBytes } : {}),
  }
}

/**
 * `spillPreview`'s shape for output whose file stopped at the cap: the note says the file holds
 * only its first part. The tail shown is still the output's real end.
 */
function cappedPreview(shown: SpillExcerpt, path: string, cap: number): string {
  const count = groupDigits
  const note = `[… ${leftOut(shown)} left out. The output (${count(shown.totalChars)} characters, ${count(shown.totalLines)} lines) was too long to keep whole: its first ${formatBytes(cap)} are saved at ${path}; read the part you need from that file (a line window, or a search) rather than all of it.]`
  return [shown.head, note, shown.tail].filter((part) => part !== '').join('\n')
}

/** What the model reads: the output, then one bracketed line per fact about how it ended. */
export function renderValue(value: FrozenJson<BashValue>): string {
  if ('jobId' in value) {
    const read = value.outputPath === null ? 'read its output with job_output' : `its output is saved to ${value.outputPath}; read it with job_output`
    return `[started in the background as job ${value.jobId}; ${read}, stop it with job_kill. You will get a notice when it ends.]`
  }
  const lines = value.output === '' ? [] : [value.output]
  if (value.outputFileCap !== undefined && value.unsavedBytes !== undefined) lines.push(capNote(value.outputFileCap, value.unsavedBytes))
  if (value.leftovers > 0) {
    lines.push(`[stopped ${value.leftovers} process${value.leftovers === 1 ? '' : 'es'} the command left running; start servers and watchers with run_in_background]`)
  }
  if (value.timedOut) lines.push(`[timed out after ${groupDigits(value.timeoutMs)} ms]`)
  if (value.cancelled) lines.push('[cancelled]')
  if (value.signal !== null) lines.push(`[killed by signal ${value.signal}]`)
  if (value.exitCode !== null) lines.push(`[exit code: ${value.exitCode}]`)
  return lines.join('\n')
}

/** Kept in the log beside the content, so the result card can be drawn on replay. */
export function presentationMeta(value: FrozenJson<BashValue>): JsonValue {
  if ('jobId' in value) return { jobId: value.jobId }
  return { exitCode: value.exitCode, signal: value.signal, truncated: value.truncated, timedOut: value.timedOut, cancelled: value.cancelled }
}

/** The pending call's card: the command and where it runs. */
export function presentCall(args: { command: string; description: string; workdir?: string }): ToolCallView {
  return { card: 'terminal', title: args.description, command: args.command, ...(args.workdir === undefined ? {} : { cwd: args.workdir }) }
}

/** The finished call's card, from the log alone. */
export function presentResult(args: { description: string }, result: DurableToolResult): ToolResultView | undefined {
  if (result.isError) return undefined
  const output = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n')
  const meta = isRecord(result.meta) ? result.meta : {}
  const exitCode = typeof meta.exitCode === 'number' ? meta.exitCode : null
  const signal = typeof meta.signal === 'string' ? meta.signal : null
  // Who stopped it, when rein did: a UI says `cancelled` or `timed out`, not only the signal.
  const stopped = meta.cancelled === true ? 'cancelled' : meta.timedOut === true ? 'timed-out' : undefined
  return { card: 'terminal', title: args.description, output, exitCode, signal, truncated: meta.truncated === true, ...(stopped ? { stopped } : {}) }
}

/** One line for history compression. */
export function summarize(args: { command: string }, result: DurableToolResult): string {
  const command = shorten(args.command, 80)
  if (result.isError) return `bash \`${command}\` failed to run`
  const meta = isRecord(result.meta) ? result.meta : {}
  if (typeof meta.jobId === 'string') return `bash \`${command}\` started as job ${meta.jobId}`
  const end = meta.timedOut === true ? 'timed out' : typeof meta.signal === 'string' ? `killed by ${meta.signal}` : typeof meta.exitCode === 'number' ? `exit ${meta.exitCode}` : 'ended'
  return `bash \`${command}\`: ${end}`
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
