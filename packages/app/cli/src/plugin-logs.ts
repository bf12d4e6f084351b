/**
 * The plugins' log lines on stderr: warnings and errors always (a collector that cannot be reached,
 * a recall that failed — each plugin says such a thing once), notices too with `--verbose`; never
 * debug. Secrets the environment holds are masked.
 *
 * Without `--verbose` each mistake is printed once. cordis logs an error's cause as a line of its
 * own just before the error: when the error's message repeats the cause's, the cause line is
 * dropped (otherwise it is the only place the cause is said). And a row that fails to start is
 * logged by cordis, then named in the composition's problem report: while a composition loads or
 * reloads, error lines wait, and those the report states are dropped. Warnings and notices never
 * wait for a load: one may explain why it is slow.
 */

import { messageOf, maskSecrets, maskText, secretValues } from '@rein/base'
import { Logger, type Context, type Exporter } from '@deepseek-ai/cordis'
import type { Io } from './io.ts'
import { neutralize } from './terminal-text.ts'

type LogMessage = Parameters<Exporter['export']>[0]

export interface PluginLogs {
  /**
   * Runs `work` (a load or a reload) holding the plugins' error lines back; when it fails, those
   * its error message states are dropped, as that message is printed. The rest are printed when it
   * settles, or after `HOLD_MS` should it take that long (a plugin still starting).
   */
  around<T>(work: () => Promise<T>): Promise<T>
  /**
   * Prints each line through `wrap` until the returned function is called: `rein chat` writes a
   * line above the prompt it shows, then shows the prompt again with what was typed.
   */
  printThrough(wrap: (print: () => void) => void): () => void
  /**
   * Drops the lines of logger `name` that begin with `prefix` from now on: what rein has already
   * said in its own words (the built-in composition's compaction notice, which a subagent's agent
   * would say again, pointing at a row the user does not have).
   */
  quiet(name: string, prefix: string): void
}

/** The longest error lines wait for a load: as long as rein waits before it says a load is slow. */
const HOLD_MS = 10_000

export function printPluginLogs(context: Context, io: Io, verbose: boolean): PluginLogs {
  const secrets = secretValues(io.env)
  const shown = new Set(verbose ? ['error', 'warn', 'info'] : ['error', 'warn'])
  const quieted: { name: string; prefix: string }[] = []
  let through = (print: () => void) => print()
  const write = (message: LogMessage) => {
    const text = maskSecrets(Logger.format(exporter, verbose ? message : withoutFrames(message)), secrets) as string
    through(() => io.stderr.write(`${neutralize(`[${message.type}] ${message.name}: ${text}`)}\n`))
  }
  const held = heldLines(write, secrets)
  const exporter: Exporter = {
    // cordis's levels: error 0, info 1, warn 2, debug 3.
    levels: { default: 2 },
    export: (message) => {
      if (!shown.has(message.type)) return
      if (quieted.some(({ name, prefix }) => message.name === name && Logger.format(exporter, message).startsWith(prefix))) return
      // Stack frames, causes: --verbose shows everything as cordis logs it.
      if (verbose) write(message)
      else held.add(message)
    },
  }
  context.logger.exporter(exporter)
  return {
    around: (work) => held.around(work),
    printThrough: (wrap) => {
      through = wrap
      return () => { through = (print) => print() }
    },
    quiet: (name, prefix) => { quieted.push({ name, prefix }) },
  }
}

/**
 * Lines wait a moment before they are printed: cordis logs a cause and then its error in one go,
 * so the cause line can be dropped once the error is seen. During `around`, error lines wait for
 * its end (only they can be in its problem report); the others are printed as they come.
 */
function heldLines(write: (message: LogMessage) => void, secrets: readonly string[]) {
  let pending: LogMessage[] = []
  let holding = false
  let scheduled = false
  const flush = (report?: string) => {
    const lines = pending
    pending = []
    // The report comes masked; masked again here, it is compared with masked lines whatever its source.
    const reported = report === undefined ? undefined : maskText(report, secrets).split('\n')
    for (const message of lines) if (!repeated(message, lines) && !stated(message, reported, secrets)) write(message)
  }
  // While a load runs: print what is not an error, keep the errors back (a cause line among them).
  const flushUnheld = () => {
    const lines = pending
    pending = lines.filter((message) => message.type === 'error')
    for (const message of lines) if (message.type !== 'error') write(message)
  }
  return {
    add(message: LogMessage) {
      pending.push(message)
      if ((holding && message.type === 'error') || scheduled) return
      scheduled = true
      queueMicrotask(() => {
        scheduled = false
        if (holding) flushUnheld()
        else flush()
      })
    },
    async around<T>(work: () => Promise<T>): Promise<T> {
      holding = true
      const timer = setTimeout(() => { holding = false; flush() }, HOLD_MS).unref()
      let report: string | undefined
      try {
        return await work()
      } catch (error) {
        report = messageOf(error)
        throw error
      } finally {
        clearTimeout(timer)
        holding = false
        flush(report)
      }
    },
  }
}

/** The error a line is about, when the line is an error alone (as cordis logs a plugin's failure). */
function errorOf(message: LogMessage): Error | undefined {
  const [first] = message.args
  return message.args.length === 1 && first instanceof Error ? first : undefined
}

/** A cause cordis logged on its own, before an error among `lines` whose message already says it. */
function repeated(message: LogMessage, lines: readonly LogMessage[]): boolean {
  const cause = errorOf(message)
  if (cause === undefined) return false
  return lines.some((line) => {
    const error = errorOf(line)
    // A cause without a message is said by its name or code, which the error's message does not carry.
    return line !== message && error?.cause === cause && cause.message !== '' && error.message.includes(cause.message)
  })
}

/**
 * An error whose message ends a line of the problem report (`row "t" (…): failed to start: <message>`),
 * compared masked: the report's lines are, the logged error holds the secret.
 */
function stated(message: LogMessage, reported: readonly string[] | undefined, secrets: readonly string[]): boolean {
  const line = errorOf(message)?.message.split('\n')[0]?.trim()
  if (reported === undefined || line === undefined || line === '') return false
  const first = maskText(line, secrets)
  return reported.some((each) => each.trimEnd().endsWith(first))
}

/**
 * The message with a leading error's stack cut at its first frame (cordis prints a leading error
 * by its stack). Where in the code an error came from is for --verbose: it buries what to fix.
 */
export function withoutFrames(message: LogMessage): LogMessage {
  const [first, ...rest] = message.args
  if (!(first instanceof Error) || !first.stack) return message
  const frame = first.stack.search(/\n {4}at /)
  if (frame < 0) return message
  const cut = Object.assign(Object.create(first) as Error, { stack: first.stack.slice(0, frame) })
  return { ...message, args: [cut, ...rest] }
}
