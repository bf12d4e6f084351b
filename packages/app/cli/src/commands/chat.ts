/**
 * `rein chat`: a loop on a terminal. Lines typed while a turn runs are queued and sent in order.
 * Ctrl-C cancels a running turn (its calls get paired, the log saved); Ctrl-C at the prompt, a
 * second Ctrl-C, or end of input (after the queue is sent) leaves. Saving the cordis.yml in use
 * reloads it.
 */

import { basename } from 'node:path'
import { clearScreenDown, cursorTo, moveCursor } from 'node:readline'
import { createInterface, type Interface } from 'node:readline/promises'
import { Writable } from 'node:stream'
import type { Agent, TurnResult } from '@rein/agent'
import { messageOf, ReinError } from '@rein/base'
import type { ParsedArgs } from '../args.ts'
import type { ApprovalRequest } from '@rein/tools'
import { installApproval, type PromptAnswer } from '../approval.ts'
import { EXIT } from '../exit-codes.ts'
import { stoppingTheTurn, stopTurn } from '../interrupts.ts'
import type { Io } from '../io.ts'
import { compactOutcome } from '../render.ts'
import { describeRoute, inUserTerms, openAgent, requireModel, settleJobs, showResult, windowErrorInTerms, withComposition, type SessionScope } from '../session-command.ts'
import { neutralize } from '../terminal-text.ts'
import { isTerminalGone } from '../terminal-gone.ts'
import { watchComposition, type CompositionWatch } from '../watch-config.ts'

export async function chatCommand(args: ParsedArgs, io: Io): Promise<number> {
  if (!io.stdin.isTTY) throw new ReinError('USAGE', 'rein chat needs a terminal; for scripts use rein run "…"')
  requireModel(args.options, io)
  return withComposition(args.options, io, async (scope) => {
    const echo = heldEcho(io.stderr)
    const prompt = createInterface({ input: io.stdin, output: echo.screen, terminal: true })
    // A terminal that went away fails readline's reset of its mode with EIO, which readline passes
    // on as its own error: the SIGHUP that comes with it ends the chat in order, as a signal does.
    prompt.on('error', (error) => {
      if (!isTerminalGone(error)) throw error
    })
    prompt.setPrompt('> ')
    // Queued from the start: a line typed while the agent opens is sent, not dropped.
    const lines = lineQueue(prompt, echo, io.stderr)
    // A plugin's log line (an exporter failing in the background) goes above the prompt too.
    const ownLogs = scope.logs.printThrough((print) => lines.interrupt(print, io.stderr))
    // A pending approval question takes the next line before the queue sees it (readline's rule).
    // readline holds one question at a time (a second one asked meanwhile never gets its answer,
    // which goes to the model instead): questions wait their turn.
    let asked: Promise<unknown> = Promise.resolve()
    // The prompt holds the terminal (raw mode, stdin read): a chat that cannot start closes it, and the process ends with the error.
    const leaveUnstarted = (error: unknown): never => {
      prompt.close()
      ownLogs()
      echo.stop()
      throw error
    }
    try {
      installApproval(scope.ctx, args.options, (request) => {
        const answer = asked.then(() => ask(request))
        asked = answer.catch(() => {})
        return answer
      })
    } catch (error) {
      leaveUnstarted(error)
    }
    async function ask(request: ApprovalRequest): Promise<PromptAnswer> {
      if (request.signal?.aborted) return 'deny'
      // What was typed at the prompt is no part of the answer: set aside, and given back after.
      const typed = lines.setAside()
      // What the call would do, above the question (a line of its own: readline redraws only the
      // question's): the model's own title for the call is not what runs.
      scope.renderer.showApproval(request.toolName, scope.ctx.tools.presentCall(request.toolName, JSON.stringify(request.args)))
      echo.asking(true)
      try {
        return parseAnswer(await prompt.question(neutralize(`allow ${request.toolName} (${request.reason})? [y]es / [n]o / [a]lways for this session `), { signal: request.signal }))
      } catch {
        // Ctrl-C (the call's signal) or Ctrl-D at the question: a no, not an error to report.
        // Ctrl-D leaves the cursor on the question's line, where the tool's line would run on.
        if (!request.signal?.aborted) io.stderr.write('\n')
        return 'deny'
      } finally {
        echo.asking(false)
        // Asked while the prompt waited (a background subagent's call): the question took its line.
        lines.giveBack(typed)
      }
    }
    const opened = await openAgent(scope, args.options.session).catch(leaveUnstarted)
    const { agent } = opened
    scope.renderer.notice(`session ${agent.session.id} · Ctrl-C cancels a turn, Ctrl-D leaves`)
    const unsubscribe = agent.subscribe((event) => scope.renderer.event(event))
    // With --verbose the route was said as the agent opened: a reload that moves it says where it goes now.
    let { route } = opened
    const tell = (text: string) => lines.interrupt(() => {
      scope.renderer.notice(text)
      route = describeRoute(scope, agent, route)
    }, io.stderr)
    const watch = scope.source === 'built-in' ? undefined : watchComposition(scope.composition, tell, agent, scope.logs, { env: io.env, giveUp: scope.interrupted })
    // At the prompt no turn runs: a signal then closes the chat, as Ctrl-C there does, and says so above the prompt.
    scope.announceSignal((name) => (agent.status === 'running' ? stoppingTheTurn(name) : CLOSING), (text) => lines.interrupt(() => scope.renderer.notice(text), io.stderr))
    // SIGTERM or SIGHUP (Ctrl-C at the terminal reaches readline, below): end the turn and the chat.
    scope.interrupted.addEventListener('abort', () => {
      stopTurn(agent, scope.interrupted.reason, scope.renderer)
      lines.stop()
      prompt.close()
    })
    // The answers go to stdout: once nobody reads it, the chat ends as `rein run` would (exit 130).
    let outputGone = false
    const onOutputClosed = () => {
      outputGone = true
      if (agent.status === 'running') agent.cancel('stdout was closed')
      lines.stop()
      prompt.close()
    }
    io.outputClosed?.addEventListener('abort', onOutputClosed)
    let cancelling = false
    prompt.on('SIGINT', () => {
      // A turn or a /compact running: Ctrl-C stops it, and the chat goes on.
      if (agent.status === 'running' && !cancelling) {
        cancelling = true
        agent.cancel('SIGINT')
      } else if (!cancelling && lines.cancelHandedOut()) {
        // Read with the line's Enter, before its turn could start: it stops that line, as it would its turn.
        cancelling = true
      } else {
        // A second Ctrl-C while the first still stops the turn: the person wants out, and is told so.
        if (cancelling && agent.status === 'running') scope.renderer.notice('Ctrl-C again: leaving the chat once the turn has stopped (the session is saved)')
        lines.stop()
        prompt.close()
      }
    })
    let last = 0
    try {
      for (let line = await lines.next(); line !== undefined; line = await lines.next()) {
        cancelling = false
        if (lines.started() === 'cancelled') {
          scope.renderer.notSent(line, new ReinError('CANCELLED', 'Ctrl-C came before the line reached the model'))
          last = EXIT.interrupted
          continue
        }
        if (!line.trim()) continue
        // A line typed ahead waits for a reload under way: its request must not meet a restarting row.
        if (watch && !await reloaded(watch, lines, scope, line)) break
        // A leading space sends a line as written, this one too.
        const compact = /^\/compact(?:\s+(.*))?$/.exec(line.trimEnd())
        if (compact) {
          await compactNow(scope, agent, compact[1]?.trim())
          continue
        }
        if (slashCommand(scope, line)) continue
        last = await sendLine(scope, agent, line)
      }
      if (outputGone) {
        scope.renderer.notice('stdout was closed, so the chat ends; what was said is saved in the session')
        return EXIT.interrupted
      }
      return last
    } finally {
      io.outputClosed?.removeEventListener('abort', onOutputClosed)
      // Closed first: a Ctrl-C while leaving waits for a reload is then a signal, which gives it up.
      prompt.close()
      if (watch) await leaveAfterReload(watch, lines, scope)
      unsubscribe()
      ownLogs()
      echo.stop()
      // Leaving the chat ends its background jobs (recorded), as leaving the process would.
      await settleJobs(scope, agent, 0)
      await agent.close()
      // The log is written with the first message: the id announced above names nothing yet.
      if (agent.session.events.length === 0) scope.renderer.notice(`nothing was sent, so session ${agent.session.id} was not kept`)
    }
  })
}

/** What a signal at the prompt does: there is no turn to stop, and leaving stops the chat's jobs. */
const CLOSING = 'closing the chat (no turn was running; its jobs stopped, the session saved)'

/**
 * Waits for the reload under way before `line` is sent, saying so: a row that takes long (or never
 * finishes) to start must not hold a typed line without a word. False when the chat is left
 * meanwhile (Ctrl-C, a signal): the line is then said not to be sent.
 */
async function reloaded(watch: CompositionWatch, lines: LineQueue, scope: SessionScope, line: string): Promise<boolean> {
  if (!watch.pending()) return true
  const name = basename(scope.composition.file)
  scope.renderer.notice(`this line is sent once the ${name} reload under way is done`)
  const settled = watch.settled().then(() => 'settled' as const)
  const left = lines.left.then(() => 'left' as const)
  let outcome = await Promise.race([settled, left, lines.ended.then(() => 'ended' as const)])
  if (outcome === 'ended') {
    // End of input sends what was typed, then leaves: a reload that never finishes would hold it without a word.
    const count = 1 + lines.typedAhead()
    const them = count === 1 ? 'it' : 'them'
    scope.renderer.notice(`input ended: ${count === 1 ? 'this line is' : `these ${count} lines are`} sent once the ${name} reload under way is done${watch.waitsFor()}; Ctrl-C leaves without sending ${them}`)
    outcome = await hushed(scope, Promise.race([settled, left]))
  }
  if (outcome === 'settled') return true
  // This line and any typed after it: none goes nowhere without a word.
  const pendingReload = new ReinError('RELOAD_PENDING', `the chat was left while the ${name} reload was still under way`)
  for (const each of [line, ...lines.drain()]) scope.renderer.notSent(each, pendingReload)
  return false
}

/**
 * Leaving waits for a reload under way (its rows would be disposed while they start), saying so: a
 * row that never finishes starting while it keeps a timer or a socket open would hold it without a
 * word. A Ctrl-C meanwhile leaves without it; so does a reload given up by a signal before.
 */
async function leaveAfterReload(watch: CompositionWatch, lines: LineQueue, scope: SessionScope): Promise<void> {
  if (watch.pending() && !scope.interrupted.aborted) {
    const name = basename(scope.composition.file)
    scope.renderer.notice(`leaving once the ${name} reload under way is done${watch.waitsFor()}; Ctrl-C ${lines.stopped() ? 'again ' : ''}leaves without it`)
    await hushed(scope, watch.stop())
  } else {
    await watch.stop()
  }
  if (watch.gaveUp() && scope.interrupted.aborted) scope.leaveStuckRows()
}

/** Awaits `work`, during which a signal gives up a reload (whose line says so) rather than stopping a turn. */
async function hushed<T>(scope: SessionScope, work: Promise<T>): Promise<T> {
  scope.hushSignal(true)
  try {
    return await work
  } finally {
    scope.hushSignal(false)
  }
}

/**
 * Sends one line and shows how its turn ended; returns the exit code that turn stands for. A turn
 * that cannot start (its session could not be opened again, say) is said, with the line typed, and
 * the chat goes on: what went wrong may be fixed meanwhile, and the next line may go through.
 */
async function sendLine(scope: SessionScope, agent: Agent, line: string): Promise<number> {
  let result: TurnResult
  try {
    result = await agent.send(line)
  } catch (error) {
    scope.renderer.notSent(line, inUserTerms(scope.renderer, error))
    return EXIT.error
  }
  return showResult(scope.renderer, agent, result)
}

/** `/compact [instructions]`: compacts now and says what it did; a failure is said, and the chat goes on. */
async function compactNow(scope: SessionScope, agent: Agent, instructions: string | undefined): Promise<void> {
  try {
    scope.renderer.notice(compactOutcome(await agent.compactNow(instructions || undefined)).line)
  } catch (error) {
    scope.renderer.notice(`/compact failed: ${messageOf(windowErrorInTerms(scope, agent, inUserTerms(scope.renderer, error)))}`)
  }
}

const CHAT_HELP = [
  'in this chat:',
  '  /compact [what to keep]  shorten the context now (what to keep: for the summary)',
  '  /help                    this list',
  '  Ctrl-C                   cancel the running turn (twice: and leave); at the prompt, leave',
  '  Ctrl-D                   leave, once the lines typed ahead are sent',
  'every other line is sent to the model; one that starts with / is sent when it starts with a space',
].join('\n')

/**
 * `/help`, and a line that reads as a command the chat does not have (`/quit`, `/clear`): said, not
 * sent, as the model would be paid to read it as a message. True when the line was such a command.
 * A path with a second slash (`/etc/hosts …`) is a message; a leading space sends any line as written.
 */
function slashCommand(scope: SessionScope, line: string): boolean {
  const word = /^\/([A-Za-z][\w-]*)(?=\s|$)/.exec(line)?.[1]
  if (word === undefined) return false
  if (word === 'help') {
    scope.renderer.notice(CHAT_HELP)
    return true
  }
  scope.renderer.notice(`unknown command /${neutralize(word)}: not sent; the chat has /compact [what to keep] and /help (Ctrl-D leaves); to send a line that starts with /, start it with a space`)
  return true
}

/** `y`/`yes` allows, `a`/`always` allows the tool for the rest of the chat; anything else denies. */
function parseAnswer(answer: string): PromptAnswer {
  const word = answer.trim().toLowerCase()
  if (word === 'y' || word === 'yes') return 'allow'
  if (word === 'a' || word === 'always') return 'always'
  return 'deny'
}

/**
 * The terminal as readline writes to it, echo included. The echo is shown only at the prompt and
 * at a question: typed while a turn streams its answer to the same terminal, it would land inside
 * the answer. Held back, the text is not lost: readline keeps a half-typed line and shows it with
 * the next prompt, and a whole line is shown as it is sent.
 */
function heldEcho(stderr: Io['stderr']) {
  let prompting = false
  let asking = false
  const screen = Object.assign(new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (prompting || asking) stderr.write(chunk)
      done()
    },
  }), { isTTY: true })
  // readline wraps the line at the terminal's width and redraws it when the terminal is resized.
  Object.defineProperty(screen, 'columns', { get: () => ('columns' in stderr ? stderr.columns : undefined) })
  const resized = () => screen.emit('resize')
  stderr.on('resize', resized)
  return {
    screen,
    /** The prompt waits for a line (or no longer does). */
    prompting(on: boolean) {
      prompting = on
    },
    /** A question is asked (or answered). */
    asking(on: boolean) {
      asking = on
    },
    /** Whether the prompt or a question is on the screen, waiting for what is typed. */
    shown(): boolean {
      return prompting || asking
    },
    stop() {
      stderr.off('resize', resized)
    },
  }
}

/**
 * Every line the terminal gives, in order, whether or not anyone waits for it. `next()` shows the
 * prompt when the queue is empty; it resolves undefined once input ended and the queue is drained,
 * or at once after `stop()`. Typing is echoed only while the prompt waits (`heldEcho`); a line
 * typed ahead is shown as the queue sends it.
 */
function lineQueue(prompt: Interface, echo: ReturnType<typeof heldEcho>, stderr: Io['stderr']) {
  const queued: string[] = []
  let waiting: ((line: string | undefined) => void) | undefined
  // A line handed to the chat whose turn has not started yet (`started`), and whether a Ctrl-C stopped it.
  let handedOut: 'none' | 'waiting' | 'cancelled' = 'none'
  let ended = false
  let stopped = false
  let leave = () => {}
  let end = () => {}
  /** Resolves once the chat is left at once (`stop`: Ctrl-C at the prompt, a signal); at the end of input the queue is still sent. */
  const left = new Promise<void>((resolve) => { leave = resolve })
  /** Resolves at the end of input (Ctrl-D), or once the prompt is closed. */
  const inputEnded = new Promise<void>((resolve) => { end = resolve })
  const settle = (line: string | undefined) => {
    const resolve = waiting
    waiting = undefined
    resolve?.(line)
  }
  prompt.on('line', (line) => {
    if (!waiting) {
      queued.push(line)
      return
    }
    echo.prompting(false)
    if (line.trim()) handedOut = 'waiting'
    settle(line)
  })
  prompt.on('close', () => {
    ended = true
    end()
    settle(undefined)
  })
  return {
    left,
    ended: inputEnded,
    /** Whether the chat was left at once (`stop`). */
    stopped: () => stopped,
    /** How many lines were typed and not yet sent. */
    typedAhead: () => queued.length,
    /**
     * Called as the chat takes a line: whether a Ctrl-C came after the line was read and before this
     * (the same keystrokes), so the line is not to be sent. Ctrl-C is a turn's cancel again after it.
     */
    started(): 'go' | 'cancelled' {
      const was = handedOut
      handedOut = 'none'
      return was === 'cancelled' ? 'cancelled' : 'go'
    },
    /** Stops the line handed out and not yet started, if there is one; false when there is none. */
    cancelHandedOut(): boolean {
      if (handedOut !== 'waiting') return false
      handedOut = 'cancelled'
      return true
    },
    next(): Promise<string | undefined> {
      if (stopped) return Promise.resolve(undefined)
      const line = queued.shift()
      if (line !== undefined) stderr.write(`> ${neutralize(line)}\n`)
      if (line !== undefined || ended) return Promise.resolve(line)
      echo.prompting(true)
      // The cursor stays after what was typed while the echo was held (readline resets it otherwise).
      prompt.prompt(true)
      return new Promise((resolve) => { waiting = resolve })
    },
    stop() {
      stopped = true
      leave()
      settle(undefined)
    },
    /** Takes out the lines typed and not yet sent. */
    drain(): string[] {
      return queued.splice(0)
    },
    /** Takes out what was typed so far (shown or not), for a question that must not read it. */
    setAside(): string {
      const typed = prompt.line
      if (typed !== '') {
        prompt.write(null, { ctrl: true, name: 'e' })
        prompt.write(null, { ctrl: true, name: 'u' })
      }
      return typed
    },
    /** Puts `typed` back after a question, and the prompt too if it waits for a line. */
    giveBack(typed: string) {
      if (ended) return
      if (waiting) prompt.prompt(true)
      if (typed !== '') prompt.write(typed)
    },
    /**
     * Writes `print`'s output above the prompt or question shown, then shows it again with what was
     * typed; printed on its line, the output would run into it, and the question would be gone.
     */
    interrupt(print: () => void, screen: NodeJS.WritableStream) {
      if (!echo.shown() || ended) {
        print()
        return
      }
      // Back to the row the prompt (or question) starts on: with what was typed, it may wrap.
      const { rows } = prompt.getCursorPos()
      moveCursor(screen, 0, -rows)
      cursorTo(screen, 0)
      clearScreenDown(screen)
      print()
      // readline redraws from as many rows up as the cursor was on: blank rows for it, not the output.
      screen.write('\n'.repeat(rows))
      prompt.prompt(true)
    },
  }
}

type LineQueue = ReturnType<typeof lineQueue>
