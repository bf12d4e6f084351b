/**
 * SIGINT, SIGTERM and SIGHUP for a command's whole life, not just while a turn runs: the first
 * stops the work in order — the turn is cancelled on SIGINT, interrupted on the others (calls
 * paired or left for resume, the log saved), a wait for
 * background jobs ends and they are stopped, the composition is disposed, which stops every
 * command still running — and the second exits at once, where the process's exit hooks still
 * stop running commands. A signal with no handler would end rein and leave its commands running.
 * `rein rewind` is not stopped by the first: it finishes putting the files back, saying so.
 */

import type { Agent } from '@rein/agent'
import { EXIT } from './exit-codes.ts'
import type { Io } from './io.ts'
import type { Renderer } from './render.ts'

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

export interface Interrupts {
  /** Aborted (with the signal's name) by the first signal. */
  readonly signal: AbortSignal
  /**
   * While on, the first signal is not announced: what it gives up is not the turn, and the command
   * says it (rein chat leaving without a reload that never finishes).
   */
  hush: (on: boolean) => void
  /**
   * Replaces what the first signal is said to do, and where it is said: for a command whose state
   * decides what a signal stops (rein chat at its prompt has no turn to stop).
   */
  announce: (stopping: (name: NodeJS.Signals) => string, notice?: (text: string) => void) => void
  /** Removes the handlers; call it after everything was disposed. */
  release(): void
}

/**
 * `stopping` is what the first signal is said to do; by default, stop the turn and what it started.
 * A command the signal does not stop (rein rewind) says what it finishes instead.
 */
export function trapInterrupts(io: Io, notice: (text: string) => void, stopping: (name: NodeJS.Signals) => string = stoppingTheTurn): Interrupts {
  const controller = new AbortController()
  let hushed = false
  let say = { stopping, notice }
  const onSignal = (name: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(EXIT.interrupted)
    if (!hushed) say.notice(`${name}: ${say.stopping(name)}; press Ctrl-C again to quit without waiting`)
    controller.abort(name)
  }
  for (const name of SIGNALS) io.signals.on(name, onSignal)
  return {
    signal: controller.signal,
    hush: (on) => { hushed = on },
    announce: (words, where = say.notice) => { say = { stopping: words, notice: where } },
    release: () => {
      for (const name of SIGNALS) io.signals.off(name, onSignal)
    },
  }
}

/** What a signal while the composition loads stops: the load, before anything ran. */
export const STOPPING_THE_LOAD = (): string => 'stopping the composition\'s load (nothing ran)'

/** What the first signal stops while a turn may run: the turn, and what it started. */
export function stoppingTheTurn(name: NodeJS.Signals): string {
  const turn = name === 'SIGINT' ? 'the turn is cancelled' : 'the turn is interrupted, for rein resume to continue'
  return `stopping (${turn}, commands and jobs stopped, the session saved)`
}

/**
 * How a signal stops a running turn: SIGINT is a person cancelling (the turn ends `aborted`, a
 * subagent with it); SIGTERM and SIGHUP are the machine or the terminal going away (`interrupted`:
 * a subagent call is left for `rein resume`, which continues the child from its log). `renderer`
 * is told an interrupt stopped the calls it shows next.
 */
export function stopTurn(agent: Pick<Agent, 'cancel' | 'interrupt'>, signal: unknown, renderer: Pick<Renderer, 'interrupting'>): void {
  if (signal === 'SIGINT') {
    agent.cancel('SIGINT')
    return
  }
  renderer.interrupting()
  void agent.interrupt()
}
