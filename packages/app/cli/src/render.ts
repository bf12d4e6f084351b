/** Terminal output: the answer on stdout, one line per tool call and the totals on stderr; or JSON lines. */

import type { AgentEvent, TreeUsage, TurnResult } from '@rein/agent'
import { addUsage, type TokenUsage } from '@rein/llm'
import { changesHistory, type ContextCompacted, type SessionSummary, type Spending, type TurnEndReason } from '@rein/session'
import type { Spend } from '@rein/telemetry'
import { addMoney, HIDDEN_CHARACTER, unicodeEscapes, maskText, secretValues, formatMoney, groupDigits, isReinError, messageOf, shorten } from '@rein/base'
import { BUILT_IN_PRICES, baseUrlHintsInBuiltInTerms, windowRefusalInBuiltInTerms } from './built-in-terms.ts'
import { jsonLine } from './json-line.ts'
import { maskKeyShapes, maskTokens } from './key-shapes.ts'
import { neutralize } from './terminal-text.ts'
import type { ToolCallView } from '@rein/tools'

export interface Output {
  stdout: NodeJS.WritableStream & { isTTY?: boolean }
  stderr: NodeJS.WritableStream & { isTTY?: boolean }
  /** Whose secret-named variables' values are masked in tool lines (a model may put a key in arguments). */
  env: NodeJS.ProcessEnv
}

export function colorsEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  // no-color.org: only a NO_COLOR that is set and not empty turns colours off.
  return Boolean(stream.isTTY) && (env.NO_COLOR === undefined || env.NO_COLOR === '') && env.TERM !== 'dumb'
}

/**
 * What a call's line shows: its label, and, for a card @rein/tools built from the raw arguments,
 * the short form shown instead should the tool refuse them (`refused`).
 */
interface CallLabel {
  label: string
  refused?: string
}

/** Most characters of a refused call's arguments a line shows: enough to see what went wrong, not the blob. */
const REFUSED_ARGUMENT_CHARS = 60
/** A tool line's label at most, cut once masked (a cut must not leave the start of a key unmasked): a card's title or a tool's name holds what the model sent, which may be anything. */
const LABEL_CHARS = 160

/** Most characters of a command an approval question shows; the rest is counted. */
const QUESTION_COMMAND_CHARS = 4_000
/**
 * What a one-line label shows as escapes: line breaks (a path or name may hold one, and would pass
 * for a line of rein's own) and the characters nobody sees that reorder or hide text (a bidi
 * override would show `photo\u202Egpj.exe` as `photoexe.jpg`). Controls are left to `neutralize`,
 * which shows them as `^[` and `<9b>`.
 */
const UNSEEN_IN_LABEL = new RegExp(`\\r\\n|[\\n\\r\\u2028\\u2029]|${HIDDEN_CHARACTER.source}`, 'gu')
/** The same within a command the approval shows line by line: its line breaks stay breaks, anything else unseen is escaped. */
const UNSEEN_IN_COMMAND = new RegExp(`[\\u2028\\u2029]|${HIDDEN_CHARACTER.source}`, 'gu')

/** `\n`, `\r`, `\r\n`, `\u2028`, `\u202e` as the escapes a reader knows them by (a control as it was). */
function escapedBreak(unseen: string): string {
  if (unseen === '\r\n') return '\\r\\n'
  if (unseen === '\n' || unseen === '\r') return unseen === '\n' ? '\\n' : '\\r'
  return unseen.length === 1 && unseen.charCodeAt(0) < 0xa0 ? unseen : unicodeEscapes(unseen)
}

/** Codes of a call no tool accepted: its arguments are whatever the model wrote. */
const REFUSED_CODES: ReadonlySet<string> = new Set(['INVALID_ARGS', 'UNKNOWN_TOOL'])

export class Renderer {
  private readonly calls = new Map<string, CallLabel>()
  /** Calls whose subagent's work was shown under them (their `…` line printed). */
  private readonly announced = new Set<string>()
  private midLine = false
  private readonly dim: (text: string) => string
  private readonly red: (text: string) => string
  private readonly secrets: readonly string[]
  /** Whether the composition is the built-in one (no cordis.yml): advice then cannot point at its rows. */
  builtIn = false
  /**
   * On the built-in composition, how to give a route (`provider/model`) with no known context
   * window one: a refusal for length says that in place of the agent's row advice.
   */
  readonly windowAdvice = new Map<string, string>()
  /** Set by `interrupting()`: calls stopped from then on were stopped by the interrupt. */
  private interrupted = false

  constructor(private readonly out: Output, private readonly json: boolean, color: boolean) {
    // Everything shown passes through one of these, so no text can carry its own escape sequences.
    this.dim = color ? (text) => `\u001b[2m${neutralize(text)}\u001b[22m` : neutralize
    this.red = color ? (text) => `\u001b[31m${neutralize(text)}\u001b[39m` : neutralize
    this.secrets = secretValues(out.env)
  }

  /**
   * A signal other than SIGINT is interrupting the turn (`rein resume` continues it): a call it
   * stops reads `interrupted`, as the turn will, not `cancelled` (what a person's Ctrl-C does).
   */
  interrupting() {
    this.interrupted = true
  }

  /** Writes one JSON line (JSON mode) or a notice on stderr. */
  notice(text: string, data?: object) {
    if (this.json) this.line(this.out.stdout, jsonLine(data ?? { type: 'notice', text }))
    else this.err(this.dim(text))
  }

  event(event: AgentEvent) {
    if (this.json) {
      this.line(this.out.stdout, jsonLine(event))
      return
    }
    switch (event.type) {
      case 'text-delta':
        this.out.stdout.write(neutralize(event.text))
        this.midLine = !event.text.endsWith('\n')
        return
      case 'usage':
        this.endAnswerLine()
        return
      case 'tool-start':
      case 'tool-end':
        this.toolLine(event, '', 0)
        return
      case 'subagent':
        this.subagent(event, 1)
        return
      case 'retry':
        this.err(this.dim(`  [retry ${event.attempt}] ${event.failure.code} from ${event.provider}; waiting ${event.delayMs} ms`))
        return
      case 'fallback':
        this.err(this.dim(`  [fallback] ${event.from.provider}/${event.from.model} → ${event.to.provider}/${event.to.model} (${event.cooldownUntil === undefined ? event.failure.code : `still cooling down after ${event.failure.code}`})`))
        return
      case 'attempt':
        // The turn's result keeps only a code and message; the attempt says whether the model was missing.
        this.missingModel = event.failure?.modelNotFound === true ? event.model : undefined
        return
      case 'context':
        this.context = event
        return
      case 'compacted':
        this.endAnswerLine()
        this.err(this.dim(compactedLine(event)))
        return
      default:
        return
    }
  }

  /** The model of the last attempt, when the server said it has no such model. */
  private missingModel: string | undefined

  /** The last request's context use, for the totals line. */
  private context: Extract<AgentEvent, { type: 'context' }> | undefined

  /** The last turn's result, and the tree total its final line showed. */
  private shown: { result: TurnResult; total: TotalSpend } | undefined

  /** What the last turn's final line counted, for `lateTotal`. */
  get lastTurn(): { runId: string; total: TotalSpend } | undefined {
    return this.shown && { runId: this.shown.result.runId, total: this.shown.total }
  }

  /**
   * The run's whole tree once background work it started has ended (a subagent still running when
   * the turn ended spends after the final line): said only when it grew.
   */
  lateTotal(total: Spend) {
    if (this.json) {
      this.line(this.out.stdout, jsonLine({ type: 'total', runId: this.shown?.result.runId, usage: total.usage, ...(total.money !== undefined ? { cost: total.money } : {}), ...(total.estimated ? { usageEstimated: true } : {}) }))
      return
    }
    const cost = total.money !== undefined ? ` · cost ${formatMoney(total.money)}` : total.unpriced ? ' · cost unknown (a model used has no price)' : ''
    this.err(this.dim(`with background work that ended after the turn: ${total.estimated ? '~' : ''}${formatUsage(total.usage)}${cost}`))
  }

  result(result: TurnResult) {
    this.shown = { result, total: turnTotal(result) }
    if (this.json) {
      const total = result.subagents && treeTotal(result, result.subagents)
      this.line(this.out.stdout, jsonLine({ type: 'result', ...result, ...(total ? { total: { ...total, subagents: result.subagents } } : {}) }))
      return
    }
    if (this.midLine) this.out.stdout.write('\n')
    this.midLine = false
    const ended = turnEndWord(result.reason)
    if (result.error) this.err(this.red(`${ended}: ${result.error.code}: ${this.errorMessage(result.error)}`))
    if (result.error && this.missingModel !== undefined) this.err(missingModelHint(this.missingModel))
    this.missingModel = undefined
    if (result.overrun) this.err(this.dim(`note: the answer went over a budget (${result.overrun.code}): ${result.overrun.message}`))
    this.err(this.dim(`${totalsLine(result, this.builtIn)}${contextShare(this.context)} · ${ended}`))
  }

  /** A turn's error message, in the built-in composition's terms when it has advice for the route. */
  private errorMessage(error: NonNullable<TurnResult['error']>): string {
    if (error.code !== 'CONTEXT_WINDOW_EXCEEDED') return error.message
    const route = /; the context window of (\S+) is not known/.exec(error.message)?.[1]
    return windowRefusalInBuiltInTerms(error.message, route === undefined ? undefined : this.windowAdvice.get(route))
  }

  /**
   * A turn that could not start (`agent.send` rejected): its code and message, as a turn's error
   * is shown, and the line typed, which went nowhere — the model never saw it and the session does
   * not hold it, so it would be lost without a word.
   */
  notSent(line: string, error: unknown) {
    const code = isReinError(error) ? error.code : 'INTERNAL_ERROR'
    const message = maskText(messageOf(error), this.secrets)
    if (this.json) {
      this.line(this.out.stdout, jsonLine({ type: 'not-sent', text: line, error: { code, message } }))
      return
    }
    if (this.midLine) this.out.stdout.write('\n')
    this.midLine = false
    this.err(this.red(`not sent: ${code}: ${message}`))
    this.err(this.dim(`your message was not sent to the model nor saved in the session: ${line}`))
  }

  /** A tool call's line once it ends: `  [tool] <label> ok|cancelled|failed <code>|…`, indented one more step per subagent level. */
  private toolLine(event: Extract<AgentEvent, { type: 'tool-start' | 'tool-end' }>, session: string, depth: number) {
    const key = `${session}/${event.callId}`
    if (event.type === 'tool-start') {
      this.endAnswerLine()
      this.calls.set(key, this.callLabel(event.name, event.card))
      return
    }
    const shown = this.calls.get(key)
    const label = shown === undefined ? shorten(this.masked(event.name), LABEL_CHARS) : (event.isError && REFUSED_CODES.has(event.code ?? '') && shown.refused) || shown.label
    this.calls.delete(key)
    const outcome = toolOutcome(event, this.interrupted)
    const status = outcome.failed ? this.red(outcome.text) : this.dim(outcome.text)
    this.err(`${this.dim(`${'  '.repeat(depth + 1)}[tool] ${label}`)} ${status}`)
  }

  /**
   * Shows what a call that asks for approval would do, above the question: a command in
   * full, its lines kept, as it would run (the title is the model's description of it, which is not
   * what runs), up to 4,000 characters; else the label its tool line would show.
   */
  showApproval(name: string, card: ToolCallView): void {
    if (card.card !== 'terminal') return this.err(`  ${this.callLabel(name, card).label}`)
    const command = maskKeyShapes(maskText(card.command, this.secrets))
    const cut = command.length > QUESTION_COMMAND_CHARS ? `\n    … ${groupDigits(command.length - QUESTION_COMMAND_CHARS)} more characters not shown` : ''
    // A bidi control or a line separator would make the command read as other than what runs.
    const lines = neutralize(command.slice(0, QUESTION_COMMAND_CHARS).replace(UNSEEN_IN_COMMAND, escapedBreak)).split('\n')
    // Where it runs changes what it does: said when the call names a folder.
    const where = card.cwd === undefined ? '' : `\n    (in ${this.masked(card.cwd)})`
    this.err(`${lines.map((line, index) => `${index === 0 ? '  $ ' : '    '}${line}`).join('\n')}${cut}${where}`)
  }

  /** A started call's label; with the short form of its raw arguments when the card is the generic one @rein/tools made of them. */
  private callLabel(name: string, card: ToolCallView): CallLabel {
    if (card.card !== 'generic') return { label: shorten(this.masked(card.title), LABEL_CHARS) }
    // A tool's own generic card: its title says what the call does (`Remember (user, fact)`), the detail to what.
    if (card.title !== undefined && card.title !== name) return { label: shorten(this.masked(card.detail === undefined ? card.title : `${card.title}: ${card.detail}`), LABEL_CHARS) }
    const label = shorten(this.masked(`${name} ${card.detail ?? ''}`.trim()), LABEL_CHARS)
    // The tool's own card would have a title of its own; this one shows the arguments as the model wrote them.
    if (card.title === undefined || card.detail === undefined) return { label }
    return { label, refused: `${shorten(this.masked(name), LABEL_CHARS)} ${shorten(maskTokens(this.masked(card.detail)), REFUSED_ARGUMENT_CHARS)}`.trim() }
  }

  /**
   * A tool line without the secrets of the environment, even one cut short (`…`) inside a secret:
   * the start of it that is left is masked too, if 8 characters or more. Text shaped like a key
   * (`sk-…`, `ghp_…`) is masked whatever the environment holds: the model may have written one.
   * A line break shows as its escape (`\n`): one call, one line, none passing for a line of rein's.
   */
  private masked(label: string): string {
    let text = maskKeyShapes(maskText(label, this.secrets)).replace(UNSEEN_IN_LABEL, escapedBreak)
    if (!text.endsWith('…')) return text
    for (const secret of this.secrets) {
      for (let length = secret.length - 1; length >= 8; length--) {
        if (text.endsWith(`${secret.slice(0, length)}…`)) {
          text = `${text.slice(0, text.length - length - 1)}***…`
          break
        }
      }
    }
    return text
  }

  /**
   * What a subagent does under the call that started it: the call is named (`…`) when a call of its child
   * first starts or ends, then the child's calls follow, indented; the child's text is the call's result.
   */
  private subagent(event: Extract<AgentEvent, { type: 'subagent' }>, depth: number, parentSession = '') {
    const inner = event.event
    if (inner.type !== 'tool-start' && inner.type !== 'tool-end' && inner.type !== 'subagent') return
    // A call can end without a start (one the child's budget left unrun): it still goes under the header.
    const parentKey = `${parentSession}/${event.callId}`
    if (!this.announced.has(parentKey)) {
      this.announced.add(parentKey)
      this.endAnswerLine()
      this.err(this.dim(`${'  '.repeat(depth)}[tool] ${this.calls.get(parentKey)?.label ?? 'subagent'} …`))
    }
    if (inner.type === 'subagent') this.subagent(inner, depth + 1, event.sessionId)
    else this.toolLine(inner, event.sessionId, depth)
  }

  /** Each request's text ends its own line, so answers of successive steps do not run together. */
  private endAnswerLine() {
    if (!this.midLine) return
    this.out.stdout.write('\n')
    this.midLine = false
  }

  /** A line on stderr, the values of secret-named variables masked: an error may quote what a server echoed. */
  private err(text: string) {
    // On a terminal both streams share the screen: end the answer's line first. Redirected, leave stdout alone.
    if (this.midLine && this.out.stdout.isTTY && this.out.stderr.isTTY) {
      this.out.stdout.write('\n')
      this.midLine = false
    }
    // On the built-in composition a provider's hint about its baseURL is said of what the user set.
    this.line(this.out.stderr, maskText(this.builtIn ? baseUrlHintsInBuiltInTerms(text, this.out.env) : text, this.secrets))
  }

  private line(stream: NodeJS.WritableStream, text: string) {
    stream.write(`${text}\n`)
  }
}

/**
 * How a turn's end reads wherever it is said (a turn's last line, `rein show`), in the words
 * `rein sessions` lists a session's status with: `aborted` is a person cancelling.
 */
const TURN_END_WORDS: Readonly<Record<TurnEndReason, string>> = {
  'completed': 'completed',
  'aborted': 'cancelled',
  'error': 'failed',
  'budget': 'over budget',
  'max-tokens': 'cut off',
  'interrupted': 'interrupted',
}

/** The word for a turn's end reason; one a newer rein wrote reads as it is. */
export function turnEndWord(reason: string): string {
  return Object.hasOwn(TURN_END_WORDS, reason) ? TURN_END_WORDS[reason as TurnEndReason] : reason
}

/** How each status only a listing has reads; a turn's end reads as everywhere else (`turnEndWord`). */
const OTHER_STATUS = new Map<string, string>(Object.entries({
  'needs-repair': 'needs repair',
  'running': 'running',
  'empty': 'empty',
} satisfies Record<Exclude<SessionSummary['status'], TurnEndReason>, string>))

/** A session's status in the word `rein sessions` lists it with, wherever a session is named (`show`'s subagent lines too). */
export function sessionStatusWord(status: string): string {
  return OTHER_STATUS.get(status) ?? turnEndWord(status)
}

type ToolEnd = Extract<AgentEvent, { type: 'tool-end' }>

/** Where a model name comes from, for a turn that failed because the server has no such model. */
function missingModelHint(model: string): string {
  return `hint: the server has no model "${neutralize(model)}": check --model, REIN_MODEL (the built-in composition) or the model on the agents row of cordis.yml`
}

/**
 * What a tool call came to, in a word or two; `failed` when it is shown as a failure. A call cut
 * short never reads `ok`: not its error (a cancel's code), nor a value that says the command was
 * stopped (a cancelled `bash` answers with its output so far, not an error).
 */
function toolOutcome(event: ToolEnd, interrupted: boolean): { text: string; failed: boolean } {
  if (event.resumable) return { text: 'interrupted: rein resume continues it', failed: false }
  const outcome = event.isError ? errorOutcome(event.code) : event.card.card === 'terminal' ? commandOutcome(event.card) : { text: 'ok', failed: false }
  // The tool only knows it was stopped; an interrupt stopped it, not a person cancelling.
  return interrupted && outcome.text === 'cancelled' ? { text: 'interrupted', failed: false } : outcome
}

/** Calls paired without running: a cancel before dispatch, a budget reached, a turn that ended first. */
const NOT_STARTED_CODES: ReadonlySet<string> = new Set(['ABORTED_BEFORE_DISPATCH', 'BUDGET_EXCEEDED', 'TOOL_NOT_STARTED'])

/** A call that ended with an error: cancelled, interrupted or never started are not failures of the tool. */
function errorOutcome(code: string | undefined): { text: string; failed: boolean } {
  if (code === 'ABORTED') return { text: 'cancelled', failed: false }
  if (code !== undefined && NOT_STARTED_CODES.has(code)) return { text: `not started (${code})`, failed: false }
  if (code?.endsWith('_CANCELLED')) return { text: `cancelled (${code})`, failed: false }
  if (code === 'INTERRUPTED' || code?.endsWith('_INTERRUPTED')) return { text: `interrupted (${code})`, failed: false }
  return { text: `failed${code ? ` ${code}` : ''}`, failed: true }
}

/** A command that did not exit cleanly, by its card: stopped by rein (a cancel, its timeout), else the signal that killed it. */
function commandOutcome(card: Extract<ToolEnd['card'], { card: 'terminal' }>): { text: string; failed: boolean } {
  if (card.stopped === 'cancelled') return { text: 'cancelled', failed: false }
  if (card.stopped === 'timed-out') return { text: 'timed out', failed: true }
  if (card.signal) return { text: `killed by ${card.signal}`, failed: true }
  return { text: 'ok', failed: false }
}

export function formatUsage(usage: TokenUsage): string {
  return `tokens ${formatTokens(usage)}`
}

/** `in 1,200 (cached 800) out 30`: input counts the cached tokens too. */
export function formatTokens(usage: TokenUsage): string {
  const cache = (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0)
  const input = usage.inputTokens + cache
  return `in ${groupDigits(input)}${cache ? ` (cached ${groupDigits(cache)})` : ''} out ${groupDigits(usage.outputTokens)}`
}

/** Every token of `usage`, cached ones included: the one figure `rein sessions` and `rein show` total. */
export function tokenCount(usage: TokenUsage): number {
  return usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0) + usage.outputTokens
}

/** `tokens in … out …[ (subagents in … out …)] · cost …` for a turn, its subagents included when there were any. */
function totalsLine(result: TurnResult, builtIn: boolean): string {
  const { subagents } = result
  const total = turnTotal(result)
  const estimated = result.usageEstimated === true || total.usageEstimated === true
  const counted = total.usage.inputTokens + total.usage.outputTokens > 0
  return `${estimated ? '~' : ''}${formatUsage(total.usage)}${subagents ? ` (subagents ${formatTokens(subagents.usage)})` : ''}${costText(total.cost, counted, builtIn)}`
}

/** ` · cost …`: the money when priced, why there is none when tokens were spent unpriced, else nothing. */
function costText(cost: number | undefined, counted: boolean, builtIn: boolean): string {
  // With no cordis.yml there is no @rein/llm row to edit: prices need one written.
  const where = builtIn ? BUILT_IN_PRICES : 'set prices on the @rein/llm row'
  return cost !== undefined ? ` · cost ${formatMoney(cost)}` : counted ? ` · cost unknown (a model used has no price; ${where})` : ''
}

/** `tokens in … out … · cost …` of what spending outside a turn came to (rein compact's summary request). */
export function spentLine(spent: Spending, builtIn: boolean): string {
  return `${spent.usageEstimated ? '~' : ''}${formatUsage(spent.usage)}${costText(spent.cost, spent.usage.inputTokens + spent.usage.outputTokens > 0, builtIn)}`
}

/** `  [compacted] …`: what a compaction did, in one line. */
function compactedLine(event: Omit<Extract<AgentEvent, { type: 'compacted' }>, 'type'>): string {
  const pruned = [
    event.pruned > 0 ? `${event.pruned} tool result${event.pruned === 1 ? '' : 's'}` : '',
    event.prunedArguments > 0 ? `the arguments of ${event.prunedArguments} call${event.prunedArguments === 1 ? '' : 's'}` : '',
  ].filter(Boolean).join(' and ')
  const what = [pruned ? `pruned ${pruned}` : '', event.summarized ? 'summarized the earlier conversation' : ''].filter(Boolean).join(' and ')
  const failed = event.summaryFailed ? ` (the summary failed: ${event.summaryFailed.code}: ${event.summaryFailed.message}; pruned only)` : ''
  const why = event.reason === 'overflow' ? ' (the provider had refused the request as too long)' : ''
  return `  [compacted] ${what || 'nothing to compact'}${why}${failed}: about ${groupDigits(event.tokensBefore)} → ${groupDigits(event.tokensAfter)} tokens`
}

/** `[compacted] …` for a compaction as the log records it. */
/**
 * What an asked-for compaction came to, in one line (`rein compact`, chat's `/compact`): nothing to
 * compact; not compacted, with the summary's failure in its own words (they say what to fix); or
 * what it did. `repaired`: a crashed log's turn was closed first, so the log did change.
 */
export function compactOutcome(data: ContextCompacted | undefined, repaired = false): { line: string; changed: boolean } {
  if (!data) return { line: 'nothing to compact (no tool result to prune, no earlier turns to summarize)', changed: false }
  if (data.summaryFailed && !changesHistory(data)) {
    const { code, message } = data.summaryFailed
    return { line: `not compacted: the summary failed (${code}: ${message}); the session is as ${repaired ? 'the repair above left it' : 'it was'}`, changed: false }
  }
  return { line: compactionLine(data), changed: true }
}

export function compactionLine(data: ContextCompacted): string {
  const { reason, pruned, prunedArguments, summary, summaryFailed, tokensBefore, tokensAfter } = data
  return compactedLine({ reason, pruned: pruned.length, prunedArguments: prunedArguments?.length ?? 0, summarized: summary !== undefined, ...(summaryFailed ? { summaryFailed } : {}), tokensBefore, tokensAfter }).trim()
}

/** ` · context 45% of 32k` when the window is known. */
function contextShare(context: Extract<AgentEvent, { type: 'context' }> | undefined): string {
  if (!context?.window) return ''
  return ` · context ${Math.round((100 * context.tokens) / context.window)}% of ${context.window >= 1000 ? `${Math.round(context.window / 1000)}k` : context.window}`
}

/** Tokens and money of a turn with its subagents, as its final line counts them; `usageEstimated` when any part is. */
type TotalSpend = { usage: TokenUsage; cost?: number; usageEstimated?: true }

function turnTotal(result: TurnResult): TotalSpend {
  return result.subagents ? treeTotal(result, result.subagents) : { usage: result.usage, ...(result.cost !== undefined ? { cost: result.cost } : {}) }
}

/** The turn's own spend and its subagents', together; money only when both are known. */
function treeTotal(result: TurnResult, subagents: TreeUsage): TotalSpend {
  // A turn that asked nothing itself (a resume whose continued subagents did the work) has no own
  // cost, as it counted no attempt: that is nothing spent, not an unpriced model.
  const asked = result.usage.inputTokens + result.usage.outputTokens > 0
  const own = result.cost ?? (asked ? undefined : 0)
  const cost = own !== undefined && subagents.cost !== undefined ? addMoney(own, subagents.cost) : undefined
  // An estimate stays marked wherever it is summed, as the late `total` line marks it.
  const estimated = result.usageEstimated === true || subagents.usageEstimated === true
  return { usage: addUsage(result.usage, subagents.usage), ...(cost !== undefined ? { cost } : {}), ...(estimated ? { usageEstimated: true as const } : {}) }
}
