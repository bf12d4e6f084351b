/**
 * `TurnState`: what one turn has written so far — its open step, the calls the model asked for in
 * it and which of them have an intent or a result — so that however the turn ends, every call is
 * paired exactly once and the step is closed before the turn is.
 */

import type { ToolCallBlock } from '@rein/llm'
import type { CoreEventData, Session, StepRequest } from '@rein/session'
import type { RunIdentity } from '@rein/tools'
import { Tally } from './accounting.ts'
import type { Notify } from './lifecycle.ts'

type ResultData = CoreEventData['tool/result']

export class TurnState {
  /** Usage and money of every attempt this turn made, failed ones included. */
  readonly tally = new Tally()
  /** The text of the turn's last answer. */
  text = ''
  /** When the turn began (epoch ms). */
  readonly startedAt = Date.now()
  private _step: number | undefined
  private _stepStartedAt = 0
  private calls: readonly ToolCallBlock[] = []
  private readonly intents = new Set<string>()
  private readonly results = new Set<string>()
  /** Calls left without a result for `recover` (an interrupt); while any is, the turn stays open in the log. */
  private readonly open = new Set<string>()

  constructor(readonly turn: number, readonly identity: RunIdentity, private readonly session: Session, private readonly notify: Notify) {}

  get step(): number | undefined {
    return this._step
  }

  openStep(step: number, request: StepRequest): void {
    this.session.append('step/start', { turn: this.turn, step, request })
    this._step = step
    const startedAt = this._stepStartedAt = Date.now()
    this.notify('agent/step-start', () => ({ identity: this.identity, turn: this.turn, step, startedAt }))
    this.calls = []
    this.intents.clear()
    this.results.clear()
  }

  /** Whether calls were left for `recover`: the step and turn must then stay open for the next resume to close. */
  get leftOpen(): boolean {
    return this.open.size > 0
  }

  closeStep(): void {
    if (this._step === undefined || this.leftOpen) return
    const step = this._step
    this.session.append('step/end', { turn: this.turn, step })
    this._step = undefined
    const startedAt = this._stepStartedAt
    this.notify('agent/step-end', () => ({ identity: this.identity, turn: this.turn, step, startedAt, endedAt: Date.now() }))
  }

  /** The calls of the logged answer: each must be paired before the step closes. */
  asked(calls: readonly ToolCallBlock[]): void {
    this.calls = calls
  }

  intent(call: ToolCallBlock, replaySafe: boolean): void {
    this.session.append('tool/call', { callId: call.id, name: call.name, arguments: call.arguments, replaySafe })
    this.intents.add(call.id)
  }

  result(data: ResultData): void {
    this.session.append('tool/result', data)
    this.results.add(data.callId)
  }

  /** Leaves a call without a result: the next resume's repair asks its tool's `recover`. */
  leaveOpen(call: ToolCallBlock): void {
    this.open.add(call.id)
  }

  /** Calls of the open step with no result yet and none coming, in the model's order. */
  unpaired(): ToolCallBlock[] {
    return this.calls.filter((call) => !this.results.has(call.id) && !this.open.has(call.id))
  }

  /**
   * Pairs every call still without a result: code `notStarted` ("<tool> was not run: <reason>")
   * for one whose body cannot have run, `TOOL_OUTCOME_UNKNOWN` for one that has an intent — unless
   * `bodiesRan` is false (the intents were never made durable, so no body started).
   */
  pairRest(notStarted: string, reason: string, bodiesRan = true): { call: ToolCallBlock; data: ResultData }[] {
    return this.unpaired().map((call) => {
      const data = bodiesRan && this.intents.has(call.id)
        ? unrun(call, 'TOOL_OUTCOME_UNKNOWN', `${call.name} was started, but the turn ended before its result was recorded (${reason}); check its effects before calling it again`)
        : unrun(call, notStarted, `${call.name} was not run: ${reason}`)
      this.result(data)
      return { call, data }
    })
  }
}

/** A result for a call that never ran (or whose outcome is unknown). */
function unrun(call: ToolCallBlock, code: string, message: string): ResultData {
  return { callId: call.id, content: [{ type: 'text', text: `Error: ${message}` }], isError: true, code }
}
