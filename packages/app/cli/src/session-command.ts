/**
 * The part every command that talks to a model shares: load the composition, install approval and
 * signal handling, get an agent (new or resumed), and turn the outcome into an exit code.
 */

import { Context } from '@deepseek-ai/cordis'
import type { Agent, CreateAgentOptions, ResumeReport, TurnResult } from '@rein/agent'
import type { Composition } from '@rein/compose'
import type { JobService } from '@rein/jobs'
import { addUsage, type TokenUsage } from '@rein/llm'
import type {} from '@rein/memory'
import type { Spend } from '@rein/telemetry'
import { addMoney, isReinError, ReinError, roundMoney } from '@rein/base'
import type { CliOptions } from './args.ts'
import { builtInModel, builtInWithoutModel, disposeUnlessStalled, loadUnlessSignalled, requireServices, usesBuiltIn } from './composition.ts'
import { saveFailureOf, unsavedText, type SaveFailure } from './errors-save.ts'
import { EXIT } from './exit-codes.ts'
import { leaveOnceDone, type Io } from './io.ts'
import { STOPPING_THE_LOAD, stoppingTheTurn, stopTurn, trapInterrupts, type Interrupts } from './interrupts.ts'
import { printPluginLogs, type PluginLogs } from './plugin-logs.ts'
import { colorsEnabled, Renderer } from './render.ts'
import { maxCostInBuiltInTerms } from './built-in-terms.ts'
import { unknownProviderIn, type ProviderSource } from './unknown-provider.ts'

export interface SessionScope {
  ctx: Context
  composition: Composition
  renderer: Renderer
  io: Io
  options: CliOptions
  /** The composition file loaded, or `built-in`. */
  source: string
  /** Aborted by the first SIGINT, SIGTERM or SIGHUP: stop what runs, in order. */
  interrupted: AbortSignal
  /** The plugins' log lines; a reload runs in `logs.around`, so a row its report names is not printed twice. */
  logs: PluginLogs
  /** While on, the first signal is not announced as stopping the turn: the command says what it gives up instead. */
  hushSignal: (on: boolean) => void
  /** Replaces what the first signal is said to stop, and where it is said (see `Interrupts.announce`). */
  announceSignal: Interrupts['announce']
  /**
   * Rows a reload gave up on never finished starting, so disposing them never can: disposing then
   * does not wait, and the process ends once the command is done, whatever those rows hold open.
   */
  leaveStuckRows: () => void
}

/** Loads the composition, runs `body`, and always disposes everything. */
/**
 * For a command that runs a turn: `NO_MODEL` before anything is loaded when the built-in composition
 * would be used and the environment enables no provider (main.ts says what to set).
 */
export function requireModel(options: CliOptions, io: Io): void {
  const lookup = { ...(options.config !== undefined ? { config: options.config } : {}), cwd: io.cwd, env: io.env }
  if (builtInWithoutModel(lookup)) throw new ReinError('NO_MODEL', 'no model configured')
  if (options.provider !== undefined && usesBuiltIn(lookup)) requireBuiltInProvider(options.provider, io.env)
}

/** The variable that enables each provider of the built-in composition. */
const BUILT_IN_PROVIDERS: Readonly<Record<string, { variable: string; row: string; name: string }>> = {
  deepseek: { variable: 'DEEPSEEK_API_KEY', row: '@rein/llm-deepseek', name: 'DeepSeek' },
  openai: { variable: 'OPENAI_API_KEY (or OPENAI_BASE_URL)', row: '@rein/llm-openai', name: 'OpenAI' },
}

/** `--provider` on the built-in composition: one it has, enabled by the environment (the agent's own error would say "add its row"). */
function requireBuiltInProvider(provider: string, env: NodeJS.ProcessEnv): void {
  const known = BUILT_IN_PROVIDERS[provider]
  if (!known) {
    throw new ReinError('USAGE', `the built-in composition has the providers ${Object.keys(BUILT_IN_PROVIDERS).join(' and ')} only; for --provider ${provider}, give a cordis.yml with its row (rein config shows what is loaded)`)
  }
  const enabled = provider === 'deepseek' ? env.DEEPSEEK_API_KEY : env.OPENAI_API_KEY ?? env.OPENAI_BASE_URL
  if (!enabled) {
    throw new ReinError('USAGE', `--provider ${provider} needs ${known.variable} set: the built-in composition adds the ${known.name} row only then (or give a cordis.yml with a ${known.row} row)`)
  }
}

export interface CompositionOptions {
  prepare?: (ctx: Context) => Promise<void>
  /**
   * For a command a signal does not stop (rein rewind: files half put back would be worse than
   * waiting): what it finishes, said when the first signal arrives. Its body's exit code stands.
   */
  finishesOnSignal?: (name: NodeJS.Signals) => string
  /** For a command about memory itself (rein memory), which fails on a memory that is off: no notice besides. */
  quietAboutMemory?: boolean
}

export async function withComposition(options: CliOptions, io: Io, body: (scope: SessionScope) => Promise<number>, { prepare, finishesOnSignal, quietAboutMemory }: CompositionOptions = {}): Promise<number> {
  const context = new Context()
  const logs = printPluginLogs(context, io, options.verbose)
  // Trapped before the load: a signal while the rows start ends the command (exit 130, nothing
  // ran), not rein by the signal's default with a row's work half begun.
  const interrupts = trapInterrupts(io, (text) => io.stderr.write(`${text}\n`), STOPPING_THE_LOAD)
  const loaded = await logs.around(() => loadUnlessSignalled({ ...(options.config !== undefined ? { config: options.config } : {}), cwd: io.cwd, env: io.env, context, stderr: io.stderr }, interrupts, io))
  if (!loaded) return EXIT.interrupted
  const { composition, source } = loaded
  const renderer = new Renderer(io, options.json, colorsEnabled(io.stdout, io.env))
  renderer.builtIn = source === 'built-in'
  interrupts.announce(finishesOnSignal ?? stoppingTheTurn, (text) => renderer.notice(text))
  const stuck = new AbortController()
  try {
    // A signal the moment the load was done: nothing ran yet either.
    if (interrupts.signal.aborted) return EXIT.interrupted
    requireServices(composition, source)
    if (!quietAboutMemory) tellMemoryProblems(composition.ctx, renderer)
    await prepare?.(composition.ctx)
    const code = await body({ ctx: composition.ctx, composition, renderer, io, options, source, interrupted: interrupts.signal, logs, hushSignal: interrupts.hush, announceSignal: interrupts.announce, leaveStuckRows: () => stuck.abort() })
    if (finishesOnSignal) return code
    // A turn that completed before the signal still leaves work the signal stopped (jobs): say so.
    return interrupts.signal.aborted && code === EXIT.ok ? EXIT.interrupted : code
  } catch (error) {
    // A signal during a resume's repair: none of it was saved, and the next resume repairs again.
    if (isReinError(error, 'REPAIR_INTERRUPTED')) {
      renderer.notice(error.message)
      return EXIT.interrupted
    }
    return unsavedOnce(renderer, error)
  } finally {
    // Opening a session may have found lost background subagents: their logs are closed while the
    // store is still loaded (disposing takes rows down in no order the subagents could rely on).
    await composition.ctx.get('subagents')?.settled()
    // Disposing stops every command still running; a second signal meanwhile exits at once. A row
    // that never stops (one an edit added that never finished starting, a dispose that never
    // settles) is left, not waited for forever: the command is done, so a signal now leaves it.
    interrupts.announce(() => 'leaving what has not stopped (the command is done, the session saved)')
    const leave = () => stuck.abort()
    interrupts.signal.addEventListener('abort', leave, { once: true })
    const left = await disposeUnlessStalled(composition, stuck.signal, io)
    interrupts.signal.removeEventListener('abort', leave)
    interrupts.release()
    // A row left running may keep a timer or a socket open, and with it the process, after the command.
    if (left) leaveOnceDone(io, true)
  }
}

/** Per renderer, the sessions whose failure to save a turn's result told (`streamTurn`). */
const toldUnsaved = new WeakMap<Renderer, Set<string>>()

/**
 * A session that could not be saved, thrown by the body (an agent's close that could not flush):
 * told once, in the user's terms. When the turn's result told it already, the exit code says the
 * rest; anything else is thrown on as it is.
 */
function unsavedOnce(renderer: Renderer, error: unknown): number {
  const failure = saveFailureOf(error)
  if (failure === undefined) throw error
  if (toldUnsaved.get(renderer)?.has(failure.sessionId)) return EXIT.error
  throw new ReinError(isReinError(error) ? error.code : 'SESSION_FLUSH_FAILED', unsavedText(failure), { cause: error })
}

/** Shows how a turn ended (a save failure in the user's terms) and returns the exit code it stands for. */
export async function showResult(renderer: Renderer, agent: Agent, result: TurnResult): Promise<number> {
  renderer.result(await withUnsavedTold(renderer, agent, result))
  return exitFor(result)
}

/** Notes that `failure` was told on `renderer`: the close that fails the same way says nothing more. */
function noteTold(renderer: Renderer, failure: SaveFailure): void {
  toldUnsaved.set(renderer, (toldUnsaved.get(renderer) ?? new Set<string>()).add(failure.sessionId))
}

/**
 * `error` as a rein user reads it: a session that could not be saved in the disk's terms (and
 * noted as told, so leaving does not say it again), anything else as it is.
 */
export function inUserTerms(renderer: Renderer, error: unknown): unknown {
  const failure = saveFailureOf(error)
  if (failure === undefined) return error
  noteTold(renderer, failure)
  return new ReinError(isReinError(error) ? error.code : 'SESSION_FLUSH_FAILED', unsavedText(failure), { cause: error })
}

/**
 * A turn that ended because its log could not be saved carries the store's failure as text only,
 * in store terms. A flush again (what the close does next anyway) gives it typed, to say in the
 * user's terms; should the flush succeed (space was freed meanwhile) the result is shown as it is.
 */
async function withUnsavedTold(renderer: Renderer, agent: Agent, result: TurnResult): Promise<TurnResult> {
  if (result.error?.code !== 'SESSION_FLUSH_FAILED') return result
  const failure = await agent.session.flush().then(() => undefined, saveFailureOf)
  if (failure === undefined) return result
  noteTold(renderer, failure)
  return { ...result, error: { ...result.error, message: unsavedText(failure) } }
}

/**
 * Flags that shape an agent. With the built-in composition, `--provider` alone also picks that
 * provider's usual model (or `REIN_MODEL`).
 */
function agentOverrides(scope: SessionScope): CreateAgentOptions {
  const { options, io, source } = scope
  const model = options.model ?? (options.provider && source === 'built-in' ? builtInModel(options.provider, io.env) : undefined)
  return {
    cwd: io.cwd,
    ...(options.provider ? { provider: options.provider } : {}),
    ...(model ? { model } : {}),
    ...(options.system ? { system: options.system } : {}),
    ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
    ...(options.maxOutputTokens ? { maxOutputTokens: options.maxOutputTokens } : {}),
    ...(options.maxCost ? { maxCost: options.maxCost } : {}),
  }
}

/** A UUID's length: an id this long is taken as given, with no look at the stored ones. */
const FULL_ID_LENGTH = 36

/**
 * The stored session `given` names: its id, or the only stored id that starts with it (as git
 * takes a short hash). `given` as it is when none does, for the command's own "no session". A
 * session whose file cannot be read counts too: the command then says what is wrong with it.
 */
export async function resolveSessionId(ctx: Context, given: string): Promise<string> {
  if (given.length >= FULL_ID_LENGTH) return given
  const unreadable: string[] = []
  const listed = await ctx.sessions.list({ unreadable: (id) => { unreadable.push(id) } })
  return matchSessionId(given, [...listed.map((summary) => summary.id), ...unreadable])
}

/** `given` among `ids`: itself, the one id it starts, or `USAGE` naming those it starts when several. */
export function matchSessionId(given: string, ids: readonly string[]): string {
  if (ids.includes(given)) return given
  const asWritten = ids.filter((id) => id.startsWith(given))
  if (asWritten.length > 0) return onlyMatch(given, asWritten)
  // rein's ids are lower-case UUIDs: one copied in capitals is meant all the same, when nothing matches it as written.
  const start = given.toLowerCase()
  const whole = ids.filter((id) => id.toLowerCase() === start)
  return onlyMatch(given, whole.length > 0 ? whole : ids.filter((id) => id.toLowerCase().startsWith(start)))
}

/** The one id of `matches`, `given` when there is none, or `USAGE` naming them when several. */
function onlyMatch(given: string, matches: readonly string[]): string {
  if (matches.length <= 1) return matches[0] ?? given
  const shown = `${matches.slice(0, 3).join(', ')}${matches.length > 3 ? ', …' : ''}`
  throw new ReinError('USAGE', `${matches.length} sessions start with ${given} (${shown}); give more of the id`)
}

/** How `openAgent` tells the built-in composition's compaction notice. */
export interface OpenOptions {
  /**
   * `false`: not now, returned as `compactionNotice` instead, for a command that may find nothing
   * to run (`rein resume` of a session that ended cleanly) or says it in its own error (`rein compact`).
   */
  sayCompaction?: boolean
}

/**
 * A new agent, or the stored session's (repaired if it ended mid-turn). A resumed session keeps the
 * provider and model its log recorded unless `--provider`/`--model` say otherwise.
 */
export async function openAgent(scope: SessionScope, sessionId: string | undefined, { sayCompaction = true }: OpenOptions = {}): Promise<{ agent: Agent; repaired?: ResumeReport; route?: string; compactionNotice?: string }> {
  const overrides = agentOverrides(scope)
  // Said now, or handed back for the caller to say when it knows something will run.
  const told = (notice: string | undefined): { compactionNotice?: string } => {
    if (notice === undefined) return {}
    if (!sayCompaction) return { compactionNotice: notice }
    scope.renderer.notice(notice)
    return {}
  }
  if (!sessionId) {
    const agent = await scope.ctx.agents.create(overrides).catch((error: unknown) => { throw unknownProviderIn(providerSource(scope, false), modelMissingIn(scope.source, maxCostInBuiltInTerms(scope.source, error))) })
    const notice = told(await builtInCompactionNotice(scope, agent))
    return { agent, ...routeOf(scope, agent), ...notice }
  }
  const { cwd: _cwd, model: _default, ...rest } = overrides
  sessionId = await resolveSessionId(scope.ctx, sessionId)
  // A subagent's session goes on as its profile made it (@rein/subagents tells the agents); the flags still pick the route.
  // A signal during the repair stops what it runs (a subagent being continued is interrupted, to continue later).
  const { agent, repaired } = await scope.ctx.agents.resume(sessionId, { ...rest, ...(scope.options.model ? { model: scope.options.model } : {}), signal: scope.interrupted })
    .catch((error: unknown) => { throw unknownProviderIn(providerSource(scope, true), modelMissingIn(scope.source, maxCostInBuiltInTerms(scope.source, error))) })
  const advice = await builtInCompactionNotice(scope, agent)
  // Jobs an earlier process left running are reaped now, and the model told, before the first turn.
  scope.ctx.get('jobs')?.reap(sessionId)
  const route = routeOf(scope, agent)
  reportRepair(scope.renderer, sessionId, repaired)
  // After the repair's lines, right before the turn: what the advice is about runs next.
  const notice = told(advice)
  return { agent, repaired, ...route, ...notice }
}

/**
 * On the built-in composition, a model no catalog gives a context window cannot be compacted, and
 * the agent's warning would say to edit a provider row the user does not have: rein says what to
 * write instead (the notice returned, told before the first turn), and drops the agent's line for
 * that route (its subagents' too, which take the same route). A refusal for length gets the advice too.
 */
async function builtInCompactionNotice(scope: SessionScope, agent: Agent): Promise<string | undefined> {
  const { provider, model, compaction } = agent.options
  if (scope.source !== 'built-in' || compaction.mode === 'off') return undefined
  if ((await scope.ctx.llm.modelInfo(provider, model, scope.interrupted))?.contextWindow !== undefined) return undefined
  const said = `compaction is off for ${provider}/${model}:`
  const advice = builtInWindowAdvice(scope.composition, provider, model)
  scope.renderer.windowAdvice.set(`${provider}/${model}`, advice)
  scope.logs.quiet('agents', said)
  return `${said} ${advice}`
}

/** How to give a model a context window when the composition is the built-in one, which has no cordis.yml to edit. */
function builtInWindowAdvice(composition: Composition, provider: string, model: string): string {
  const row = composition.rows().find((candidate) => (candidate.config as { provider?: unknown } | undefined)?.provider === provider && candidate.name.startsWith('@rein/llm-'))?.name ?? 'provider'
  return `the built-in composition knows no context window for it; to give it one, write a cordis.yml (rein config shows the built-in rows) whose ${row} row has models: [{ id: ${model}, contextWindow: <tokens> }]`
}

/**
 * `NO_CONTEXT_WINDOW` (a compaction asked for of a model with no known window) with the built-in
 * composition's advice in place of the agent's, which points at a provider row the user lacks.
 */
export function windowErrorInTerms(scope: Pick<SessionScope, 'source' | 'composition'>, agent: Agent, error: unknown): unknown {
  if (scope.source !== 'built-in' || !isReinError(error, 'NO_CONTEXT_WINDOW')) return error
  const { provider, model } = agent.options
  return new ReinError('NO_CONTEXT_WINDOW', `${provider}/${model} has no known context window, so there is nothing to compact against: ${builtInWindowAdvice(scope.composition, provider, model)}`, { cause: error })
}

/** What named an agent's provider, for `unknownProviderIn`. */
function providerSource(scope: SessionScope, resuming: boolean): ProviderSource {
  return { source: scope.source, composition: scope.composition, flag: scope.options.provider, resuming }
}

/** The agents row of a cordis.yml without a provider or model: said in the file's terms, not the built-in composition's variables. */
function modelMissingIn(source: string, error: unknown): unknown {
  if (!isReinError(error, 'NO_MODEL') || source === 'built-in') return error
  const missing = Array.isArray(error.details?.missing) ? error.details.missing.filter((name): name is string => name === 'provider' || name === 'model') : []
  const named = missing.length > 0 ? missing : ['provider', 'model']
  const flags = named.map((name) => `--${name} <${name === 'model' ? 'id' : 'name'}>`).join(' and ')
  const variable = named.includes('model') ? ' (REIN_MODEL is for the built-in composition only)' : ''
  return new ReinError('NO_MODEL', `no ${named.join(' and ')} configured: set ${named.join(' and ')} on the agents row of ${source}, or give ${flags}${variable}`, { cause: error, details: { file: source } })
}

/**
 * Jobs end with their process: waits (up to the jobs row's `exitWaitMs`, or `timeoutMs`) for the
 * background jobs this session started, saying so, then kills the rest; both are recorded in the
 * log. A first Ctrl-C stops the wait.
 */
export async function settleJobs(scope: SessionScope, agent: Agent, timeoutMs?: number): Promise<void> {
  const jobs = scope.ctx.get('jobs')
  if (!jobs) return
  const running = jobs.list({ sessionId: agent.session.id }).filter((job) => job.status === 'running')
  if (running.length === 0) return
  // Whatever they do next, a background subagent's spend comes after the final line: said after.
  const before = lastRunSpend(scope)
  try {
    await waitForJobs(scope, jobs, agent, running, timeoutMs)
  } finally {
    reportLateSpend(scope, before)
  }
}

async function waitForJobs(scope: SessionScope, jobs: JobService, agent: Agent, running: readonly { jobId: string }[], timeoutMs: number | undefined): Promise<void> {
  // A reader gone away (`rein run … | head`) stops the wait as Ctrl-C does: nobody waits for the rest.
  const closed = scope.io.outputClosed
  const stop = closed ? AbortSignal.any([scope.interrupted, closed]) : scope.interrupted
  const ids = running.map((job) => job.jobId).join(', ')
  if (timeoutMs !== 0 && !stop.aborted) {
    scope.renderer.notice(`waiting for ${running.length} background job${running.length === 1 ? '' : 's'} (${ids}) to finish; Ctrl-C stops ${running.length === 1 ? 'it' : 'them'}`)
    // The turn has ended: a signal now stops only the wait.
    scope.announceSignal(() => `stopping the wait (${ids} stopped, the session saved)`)
  }
  try {
    const { killed } = await jobs.settle({ sessionId: agent.session.id, signal: stop, ...(timeoutMs !== undefined ? { timeoutMs } : {}) })
    if (killed.length > 0) scope.renderer.notice(`stopped ${killed.map((job) => job.jobId).join(', ')}: still running when rein exited (recorded in the session)`)
  } finally {
    if (timeoutMs !== 0) scope.announceSignal(() => AFTER_THE_TURN)
  }
}

/** What a signal stops once the turn and the wait for its jobs are over: only the closing. */
const AFTER_THE_TURN = 'stopping (the turn had ended; what it started is stopped, the session saved)'

/** What telemetry counts for the last turn's run and the subagents it started (theirs rolled in as they spend). */
function lastRunSpend(scope: SessionScope): Spend | undefined {
  const turn = scope.renderer.lastTurn
  return turn && scope.ctx.get('telemetry')?.cost(turn.runId)?.total
}

/**
 * The final line's figure with what the last turn's run spent since `before` added, when it spent
 * more (a background subagent it started, after the turn ended). Not telemetry's figure alone:
 * the final line may hold spend of subagents earlier turns started, which telemetry counts for those.
 */
function reportLateSpend(scope: SessionScope, before: Spend | undefined): void {
  const turn = scope.renderer.lastTurn
  const now = lastRunSpend(scope)
  if (!turn || !now || !before) return
  const late = usageSince(before.usage, now.usage)
  if (late.inputTokens + late.outputTokens + (late.cacheReadTokens ?? 0) + (late.cacheWriteTokens ?? 0) <= 0) return
  const money = turn.total.cost !== undefined && now.money !== undefined && before.money !== undefined ? addMoney(turn.total.cost, roundMoney(now.money - before.money)) : undefined
  const estimated = turn.total.usageEstimated === true || now.estimated
  scope.renderer.lateTotal({ usage: addUsage(turn.total.usage, late), ...(money !== undefined ? { money } : {}), unpriced: money === undefined && now.unpriced, estimated, attempts: now.attempts })
}

/** What `now` counts past `before` (the same run's figures, taken later). */
function usageSince(before: TokenUsage, now: TokenUsage): TokenUsage {
  const cacheRead = (now.cacheReadTokens ?? 0) - (before.cacheReadTokens ?? 0)
  const cacheWrite = (now.cacheWriteTokens ?? 0) - (before.cacheWriteTokens ?? 0)
  return {
    inputTokens: now.inputTokens - before.inputTokens,
    outputTokens: now.outputTokens - before.outputTokens,
    ...(cacheRead !== 0 ? { cacheReadTokens: cacheRead } : {}),
    ...(cacheWrite !== 0 ? { cacheWriteTokens: cacheWrite } : {}),
  }
}

/** The route said, as `openAgent` returns it. */
function routeOf(scope: SessionScope, agent: Agent): { route?: string } {
  const route = describeRoute(scope, agent)
  return route === undefined ? {} : { route }
}

/**
 * With `--verbose`: which provider, model and server the requests go to. Returns the line; given
 * the line said before (`said`, a chat after a reload), says it again only when the route changed,
 * and not when no provider serves it now (the reload's notice says that).
 */
export function describeRoute(scope: SessionScope, agent: Agent, said?: string): string | undefined {
  if (!scope.options.verbose) return undefined
  const { provider, model } = agent.options
  const endpoint = scope.ctx.get('llm')?.endpoint(provider)
  const at = endpoint?.baseURL && endpoint.baseURL !== endpoint.label ? ` at ${endpoint.baseURL}` : ''
  const where = endpoint ? ` (${endpoint.label}${at})` : ''
  const line = `provider ${provider}${where} · model ${model}`
  if (said !== undefined && (line === said || !endpoint)) return said
  scope.renderer.notice(said === undefined ? line : `the route is now ${line}`, { type: 'route', provider, model, ...endpoint })
  return line
}

/** What a repair of a log left mid-turn did, one line per call; nothing when the log was whole. */
/**
 * Closes a log a crash left mid-turn without doing any agent work, as a lost subagent's is closed:
 * the request it cut off counted (estimated), each open call settled by its tool or paired as
 * unknown, none run again, the subagents it waited on closed too, not continued (a resume would run
 * and continue them). Said as a resume's repair is; true when a turn was closed. Nothing without `ctx.agents`.
 */
export async function closeCrashedLog(scope: SessionScope, sessionId: string): Promise<boolean> {
  const subagents = scope.ctx.get('subagents')
  const agents = scope.ctx.get('agents')
  const closed = subagents ? await subagents.closeLog(sessionId) : await agents?.repair(sessionId, { signal: scope.interrupted })
  if (closed) reportRepair(scope.renderer, sessionId, closed)
  return closed?.closedTurn !== undefined
}

function reportRepair(renderer: Renderer, id: string, repaired: ResumeReport) {
  if (repaired.closedTurn === undefined) return
  const calls = repaired.rerun.length + repaired.paired.length + repaired.recovered.length
  const what = calls === 0 ? 'no tool call was waiting for a result' : `${calls} tool call${calls === 1 ? '' : 's'} had no result:`
  renderer.notice(`session ${id} had stopped mid-turn; turn ${repaired.closedTurn} is closed as interrupted, and ${what}`, { type: 'repaired', ...repaired })
  for (const call of repaired.recovered) renderer.notice(`  ${call.name} (${call.callId}): its tool settled it (${call.isError ? 'an error result, which tells the model why' : 'it finished; a subagent is continued to its end'})`)
  for (const call of repaired.rerun) renderer.notice(`  ran ${call.name} (${call.callId}) again: it is safe to repeat`)
  for (const call of repaired.paired) renderer.notice(`  ${call.name} (${call.callId}): ${call.code === 'TOOL_NOT_STARTED' ? 'had not started' : 'outcome unknown; the model is told to check'}`)
}

/**
 * Streams one turn to the terminal (or as JSON lines) with signal handling; returns the exit code.
 * A closed stdout (the reader went away) cancels the turn like a signal does.
 */
export async function streamTurn(io: Io, renderer: Renderer, agent: Agent, start: (agent: Agent) => Promise<TurnResult>, interrupted: AbortSignal): Promise<number> {
  const unsubscribe = agent.subscribe((event) => renderer.event(event))
  const onInterrupt = () => stopTurn(agent, interrupted.reason, renderer)
  const onClosed = () => agent.cancel('stdout was closed')
  interrupted.addEventListener('abort', onInterrupt)
  io.outputClosed?.addEventListener('abort', onClosed)
  try {
    const running = start(agent)
    if (interrupted.aborted) onInterrupt()
    return await showResult(renderer, agent, await running)
  } finally {
    io.outputClosed?.removeEventListener('abort', onClosed)
    interrupted.removeEventListener('abort', onInterrupt)
    unsubscribe()
  }
}

function exitFor(result: TurnResult): number {
  switch (result.reason) {
    case 'completed':
      return EXIT.ok
    case 'budget':
      return EXIT.budget
    case 'max-tokens':
      return EXIT.outputLimit
    case 'aborted':
    case 'interrupted':
      return EXIT.interrupted
    default:
      return EXIT.error
  }
}

/** Says once, on stderr, when memory is off for this process (a memory.db that cannot be used, a recall that failed). */
function tellMemoryProblems(ctx: Context, renderer: Renderer): void {
  const tell = (error: { message: string }) => renderer.notice(`memory is off for this run: ${error.message}`)
  const problem = ctx.get('memory')?.unavailable()
  // Emitted once per service: before the composition loaded (a store that could not open) it is read back instead.
  if (problem) tell(problem)
  else ctx.on('memory/unavailable', tell)
}
