/**
 * What `rein` loads: `--config`, else `./cordis.yml`, else `$REIN_HOME/cordis.yml`, else a built-in
 * composition assembled from the environment. Files are read, never written.
 */

import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Context } from '@deepseek-ai/cordis'
import type { EntryOptions } from '@deepseek-ai/cordis-plugin-loader'
import { ReinError, isReinError } from '@rein/base'
import { loadComposition, type Composition, type CompositionOptions, type SlowLoad } from '@rein/compose'
import { reinHome } from './home.ts'
import type { Interrupts } from './interrupts.ts'
import { leaveOnceDone, type Io } from './io.ts'
import { untilIdle } from './idle.ts'
import { neutralize } from './terminal-text.ts'
// Loaded by name from the built-in rows below, resolved from this package's dependencies.
import type {} from '@rein/otel-http'
import type {} from '@rein/subagents'
import type {} from '@rein/telemetry'

/**
 * This package's folder, found by walking up from this module — the same from `src/*.ts` and from
 * the bundled `dist/*.mjs`. The built-in rows' plugins are this package's own dependencies.
 */
export const PACKAGE_DIR = (() => {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir)
  return dir
})()

export interface LoadedComposition {
  composition: Composition
  /** The file loaded, or `built-in`. */
  source: string
}

interface LookupOptions {
  config?: string
  cwd: string
  env?: NodeJS.ProcessEnv
  /** The root context to load into (one with a log exporter, say). Default: a new one. */
  context?: Context
  /** Where rein says the composition is still loading after a while (see `slowNotice`). Default: nowhere. */
  stderr?: NodeJS.WritableStream
  /** Aborted: the load is given up at once, as a stalled one is (a signal while rows start). */
  giveUp?: AbortSignal
}

/** The cordis.yml `rein` uses: `--config`, else `./cordis.yml`, else `$REIN_HOME/cordis.yml`; none → built in. */
function findConfigFile(options: LookupOptions): string | undefined {
  // Given is given: an empty --config (a script's unset $CFG) must not fall back to another file.
  if (options.config !== undefined) return resolve(options.cwd, options.config)
  return [join(options.cwd, 'cordis.yml'), join(reinHome(options.env), 'cordis.yml')].find((file) => existsSync(file))
}

/**
 * Loads the composition `findConfigFile` names, else the built-in one. A file's plugin names
 * resolve from its own folder first, then from this package's dependencies, so a cordis.yml with
 * no node_modules beside it (`$REIN_HOME/cordis.yml`) can still name rein's own packages.
 */
async function loadCliComposition(options: LookupOptions): Promise<LoadedComposition> {
  const env = options.env ?? process.env
  const file = findConfigFile({ ...options, env })
  const shared = { ...(options.context ? { context: options.context } : {}), ...slowNotice(options.stderr, file ?? 'the built-in composition', env) }
  const load = (loadOptions: CompositionOptions) => loadUnlessStalled(loadOptions, options.giveUp)
  if (file) {
    return { composition: await load({ file, resolveFrom: [dirname(file), PACKAGE_DIR], ...shared }), source: file }
  }
  const builtIn = join(PACKAGE_DIR, 'built-in.cordis.yml')
  try {
    const composition = await load({ file: builtIn, rows: builtInRows(env), resolveFrom: PACKAGE_DIR, ...shared })
    return { composition, source: 'built-in' }
  } catch (error) {
    // That file does not exist: the rows come from the environment, so say so. Caused by what
    // caused the file's error: that error is this one naming the file, and would say it again.
    if (!isReinError(error, 'CONFIG_INVALID')) throw error
    throw new ReinError('CONFIG_INVALID', error.message.replace(builtIn, BUILT_IN), { ...(error.cause === undefined ? {} : { cause: error.cause }), ...(error.details ? { details: error.details } : {}) })
  }
}

/**
 * `loadCliComposition` with `interrupts` trapped before it: a signal meanwhile gives the load up,
 * and this resolves undefined (the command ends 130; the trap stays, so a second signal exits 130
 * too) while the process is let go without waiting for a row that never finished starting. A load
 * that fails releases the trap before it rejects.
 */
export async function loadUnlessSignalled(options: LookupOptions, interrupts: Pick<Interrupts, 'signal' | 'release'>, io: Pick<Io, 'stdout' | 'stderr' | 'exit'>): Promise<LoadedComposition | undefined> {
  try {
    return await loadCliComposition({ ...options, giveUp: interrupts.signal })
  } catch (error) {
    if (!interrupts.signal.aborted) {
      interrupts.release()
      throw error
    }
    leaveOnceDone(io, true)
    return undefined
  }
}

/**
 * Nothing else runs while rein loads its composition, so Node's event loop running empty then
 * means a row's start awaits something that can never settle (`untilIdle`): compose is told, and
 * names the rows. A start that only takes long (a plugin connecting) keeps the loop busy and is
 * waited for; so is one that never settles but keeps a timer or a socket open, which only
 * `slowNotice` tells about.
 */
function loadUnlessStalled(options: CompositionOptions, giveUp?: AbortSignal): Promise<Composition> {
  return untilIdle((stalled) => loadComposition({ ...options, stalled }), giveUp)
}

/**
 * Disposes every row; one that never stops (it never finished starting, or its dispose awaits
 * forever) is left once nothing else can happen, or at once when `giveUp` aborted. True when a row
 * was left so.
 */
export async function disposeUnlessStalled(composition: Composition, giveUp?: AbortSignal, slow?: { stderr: NodeJS.WritableStream; env: NodeJS.ProcessEnv }): Promise<boolean> {
  let given: AbortSignal | undefined
  // A dispose that never settles while a timer of its own runs never lets the process fall idle:
  // said after a while, as a slow load is, so rein does not wait without a word.
  const { afterMs, after } = slowStart(slow?.env ?? {})
  const notice = slow && setTimeout(() => slow.stderr.write(`rein: a tool or plugin is still stopping after ${after} (its dispose has not settled); ${giveUp ? 'Ctrl-C leaves it' : 'Ctrl-C quits'}\n`), afterMs).unref()
  try {
    await untilIdle((stalled) => {
      given = stalled
      return composition.dispose({ stalled })
    }, giveUp)
  } finally {
    clearTimeout(notice)
  }
  return given?.aborted ?? false
}

/** How long a composition loads before rein says it is still loading. */
const SLOW_START_MS = 10_000

/**
 * One line on `stderr` when the load is still going after `SLOW_START_MS`, naming the rows it waits
 * for: a plugin that never settles while it keeps a timer or a socket open would otherwise keep
 * rein waiting without a word. Said once: a line every few seconds would add nothing the first
 * did not say, and would bury the output of a plugin that is only slow.
 * `REIN_SLOW_START_MS` is a test hook (a test's hanging plugin is named after 1 ms, not 10 s),
 * not a setting, so the README does not list it.
 */
function slowNotice(stderr: NodeJS.WritableStream | undefined, source: string, env: NodeJS.ProcessEnv): Pick<CompositionOptions, 'onSlow' | 'slowAfterMs'> {
  if (!stderr) return {}
  const { afterMs, after } = slowStart(env)
  return {
    slowAfterMs: afterMs,
    // Row names come from the user's file: no control character reaches the terminal.
    onSlow: (slow) => stderr.write(`${neutralize(`rein: ${source} is still loading after ${after}${waitingFor(slow)}; still waiting (Ctrl-C to stop)`)}\n`),
  }
}

/** When a load (or a reload) is slow enough to say so, in ms and in words. */
export function slowStart(env: NodeJS.ProcessEnv): { afterMs: number; after: string } {
  const given = Number(env.REIN_SLOW_START_MS)
  const afterMs = Number.isInteger(given) && given > 0 ? given : SLOW_START_MS
  return { afterMs, after: afterMs % 1000 === 0 ? `${afterMs / 1000} s` : `${afterMs} ms` }
}

/** `: row "h" (./hang.mjs) has not finished starting — its apply has not settled`, or what else the load waits for. */
export function waitingFor({ step, rows }: SlowLoad): string {
  if (step === 'check') return ': every row started, but a compose/check listener has not settled'
  if (rows.length === 0) return ''
  const one = rows.length === 1
  const named = `${rows.join(', ')} ${one ? 'has' : 'have'} not finished`
  if (step === 'import') return `: ${named} loading ${one ? 'its module — a top-level await in it' : 'their modules — a top-level await in them'} has not settled`
  return `: ${named} starting — ${one ? 'its apply has' : 'their applies have'} not settled`
}

/** Whether `rein` would load the built-in composition (no --config, ./cordis.yml or $REIN_HOME/cordis.yml). */
export function usesBuiltIn(options: LookupOptions): boolean {
  return findConfigFile({ ...options, env: options.env ?? process.env }) === undefined
}

/**
 * Whether `rein` would load the built-in composition and it would serve no model: a command that
 * runs a turn can say so before anything is loaded (and before memory-sqlite makes its file).
 */
export function builtInWithoutModel(options: LookupOptions): boolean {
  const env = options.env ?? process.env
  return findConfigFile({ ...options, env }) === undefined && builtInProvider(env) === undefined
}

/** Whether the built-in composition, made from `env`, would run a turn with no model to name: what `rein run` refuses as `NO_MODEL`. */
export function builtInLacksModel(env: NodeJS.ProcessEnv): boolean {
  const provider = builtInProvider(env)
  return provider === undefined || builtInModel(provider, env) === undefined
}

/** The built-in composition's default route, from the environment; none when it enables no provider. */
function builtInProvider(env: NodeJS.ProcessEnv): 'openai' | 'deepseek' | undefined {
  return env.OPENAI_BASE_URL ? 'openai' : env.DEEPSEEK_API_KEY ? 'deepseek' : env.OPENAI_API_KEY ? 'openai' : undefined
}

/**
 * The OTLP endpoint variables that add the `@rein/otel-http` row: the base URL, and the per-signal
 * ones (each signal's full URL, beating the base URL for it); otel-http exports each signal that has
 * one, and turns the other off with an info line.
 */
const OTLP_ENDPOINT_ENVIRONMENT = ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT'] as const

/** The environment variables the built-in composition is made from. */
export const BUILT_IN_ENVIRONMENT = ['DEEPSEEK_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'REIN_MODEL', 'REIN_HOME', ...OTLP_ENDPOINT_ENVIRONMENT] as const

const BUILT_IN = 'the built-in composition (made from DEEPSEEK_API_KEY, OPENAI_API_KEY, OPENAI_BASE_URL and REIN_MODEL)'

/**
 * Rows for the services every rein run needs, plus whichever providers the environment enables.
 * The default route: an explicit `OPENAI_BASE_URL` (a server the user pointed at) beats a
 * `DEEPSEEK_API_KEY` that merely exists, which beats `OPENAI_API_KEY`. `REIN_MODEL` replaces the
 * default model. Flags (`--provider`, `--model`) beat all of these.
 */
export function builtInRows(env: NodeJS.ProcessEnv): EntryOptions[] {
  const rows: EntryOptions[] = [
    { id: 'llm', name: '@rein/llm' },
    { id: 'tools', name: '@rein/tools' },
    { id: 'sessions', name: '@rein/session' },
    { id: 'session-store', name: '@rein/session-jsonl', config: { root: join(reinHome(env), 'sessions') } },
    // What the agent remembers across sessions: a pinned prompt block and the memory_* tools, kept
    // in $REIN_HOME/memory.db (rein memory list shows it).
    { id: 'memory', name: '@rein/memory' },
    { id: 'memory-store', name: '@rein/memory-sqlite', config: { file: join(reinHome(env), 'memory.db') } },
    // Undo: file changes are recorded before the tools below make them, in each session's folder.
    // Snapshots and files a rewind moves aside go under the REIN_HOME rein was given.
    { id: 'checkpoints', name: '@rein/checkpoint', config: { home: reinHome(env) } },
    { id: 'checkpoint-store', name: '@rein/checkpoint-jsonl' },
    // The agent's hands, rooted at the agent's working directory: files, background jobs, bash.
    { id: 'fs', name: '@rein/tool-fs' },
    { id: 'jobs', name: '@rein/jobs' },
    { id: 'bash', name: '@rein/tool-bash' },
    // Every token and cent, subagents rolled up into their parent run (the final line shows it);
    // exported as OpenTelemetry GenAI spans when an OTEL_EXPORTER_OTLP_*ENDPOINT variable names a collector.
    { id: 'telemetry', name: '@rein/telemetry' },
  ]
  if (OTLP_ENDPOINT_ENVIRONMENT.some((name) => env[name])) rows.push({ id: 'otel', name: '@rein/otel-http' })
  if (env.DEEPSEEK_API_KEY) rows.push({ id: 'deepseek', name: '@rein/llm-deepseek' })
  if (env.OPENAI_API_KEY || env.OPENAI_BASE_URL) {
    rows.push({
      id: 'openai',
      name: '@rein/llm-openai',
      config: { ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL, label: hostOf(env.OPENAI_BASE_URL) } : {}), apiKeyEnv: env.OPENAI_API_KEY ? 'OPENAI_API_KEY' : false },
    })
  }
  const provider = builtInProvider(env)
  const model = provider && builtInModel(provider, env)
  rows.push({ id: 'agents', name: '@rein/agent', config: { ...(provider ? { provider } : {}), ...(model ? { model } : {}) } })
  // Delegation: the subagent tool, a child agent in its own session linked to the calling turn.
  rows.push({ id: 'subagents', name: '@rein/subagents' })
  return rows
}

/** `host:port` of a base URL, to name the server in messages; the text itself when it is no URL. */
function hostOf(baseURL: string): string {
  try {
    return new URL(baseURL).host || baseURL
  } catch {
    return baseURL
  }
}

/** The built-in composition's model for a provider route: `REIN_MODEL`, else the provider's usual one. */
export function builtInModel(provider: string, env: NodeJS.ProcessEnv): string | undefined {
  if (env.REIN_MODEL) return env.REIN_MODEL
  if (provider === 'deepseek') return 'deepseek-chat'
  // A local server's model names are its own; only OpenAI itself gets a default.
  if (provider === 'openai' && !env.OPENAI_BASE_URL) return 'gpt-4o-mini'
  return undefined
}

/** Fails with a one-line hint when a composition lacks what `rein` drives. */
export function requireServices(composition: Composition, source: string): void {
  for (const [service, pkg] of [['agents', '@rein/agent'], ['sessions', '@rein/session'], ['llm', '@rein/llm'], ['tools', '@rein/tools']] as const) {
    if (composition.ctx.get(service) === undefined) {
      throw new ReinError('CONFIG_INVALID', `${source} has no ${pkg} row, which rein needs (service ctx.${service})`)
    }
  }
}
