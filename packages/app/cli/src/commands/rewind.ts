/**
 * `rein rewind <id> --to <turn|message id> [--dry-run] [--fork]`: the session's files back to their
 * state before a turn, as `ctx.checkpoints` recorded them, printed as a table. The session is
 * claimed for the whole command, so no run can start on it meanwhile.
 */

import type { Context } from '@deepseek-ai/cordis'
import { ReinError, isReinError } from '@rein/base'
import type { CheckpointService, RewindPlan, RewindResult } from '@rein/checkpoint'
import type { Session, SessionEvent } from '@rein/session'
import type { ParsedArgs } from '../args.ts'
import { EXIT } from '../exit-codes.ts'
import type { Io } from '../io.ts'
import { jsonLine } from '../json-line.ts'
import { forkSession, type ForkReport } from '../rewind/fork.ts'
import { planIncomplete, planLines, resultIncomplete, resultLines } from '../rewind/table.ts'
import { anchorsFrom, chooseTurn, sessionTurns, type TurnChoice } from '../rewind/turns.ts'
import { closeCrashedLog, resolveSessionId, withComposition, type SessionScope } from '../session-command.ts'
import { neutralize } from '../terminal-text.ts'

export async function rewindCommand(args: ParsedArgs, io: Io): Promise<number> {
  const [id, ...extra] = args.positionals
  if (!id) throw new ReinError('USAGE', 'rein rewind needs a session id and --to <turn>; rein sessions lists the sessions, rein show <id> numbers the turns')
  if (extra.length > 0) throw new ReinError('USAGE', `rein rewind takes one session id, not also "${extra.join(' ')}"; see rein rewind --help`)
  const to = args.options.to?.trim()
  if (!to) throw new ReinError('USAGE', `rein rewind needs --to <turn number|message id>: the turn to go back before (rein show ${id} numbers the turns)`)
  return withComposition(args.options, io, async (scope) => {
    const checkpoints = requireCheckpoints(scope)
    const sessionId = await resolveSessionId(scope.ctx, id)
    // A log a crash left mid-turn is closed first, as `rein compact` closes it (its cut-off request
    // counted, a command left running stopped by its tool); a dry run changes nothing.
    if (!args.options.dryRun) await busyAsSuch(sessionId, () => closeCrashedLog(scope, sessionId))
    const session = await claim(scope.ctx, sessionId)
    try {
      const code = await rewind(scope, checkpoints, session, to)
      // A signal does not stop a rewind (finishesOnSignal below): say it came, and that the rewind was done anyway.
      const { interrupted } = scope
      if (interrupted.aborted) {
        const why = args.options.dryRun ? 'a dry run: nothing was changed' : 'the result says what became of each file'
        scope.renderer.notice(`${String(interrupted.reason)} came during the rewind; it was completed all the same (${why})`)
      }
      return code
    } finally {
      await session.close()
    }
  }, { finishesOnSignal: () => 'finishing the rewind first (stopping partway would leave the files half put back)' })
}

async function rewind(scope: SessionScope, checkpoints: CheckpointService, session: Session, to: string): Promise<number> {
  const { options } = scope
  const events = session.events
  const choice = chooseTurn(session.id, events, to)
  const { asked, start } = choice
  // With --fork the original gets no notice (the fork carries the conversation on), and a fork
  // before turn 1 would hold nothing: the files would go back with nothing telling any model.
  if (options.fork && start.turn === 1) {
    throw new ReinError('USAGE', `--fork needs a turn after the first: a fork before turn 1 would hold nothing. rein rewind ${session.id} --to 1 without --fork rewinds the files and tells the session's model; rein run starts a new session`)
  }
  if (asked.turn !== start.turn) {
    scope.renderer.notice(`turn ${asked.turn} continues turn ${start.turn} (it answers the same message), so the rewind goes back to before turn ${start.turn}`)
  }
  const anchors = anchorsFrom(events, start)
  // Only a dry run has the plan read back every content: a rewind reads each as it writes it.
  const plan = await planFrom(checkpoints, session.id, anchors, options.dryRun)
  const print = (lines: string[]) => scope.io.stdout.write(`${neutralize(lines.join('\n'))}\n`)
  const json = (value: object) => scope.io.stdout.write(`${jsonLine(value)}\n`)
  let incomplete = false
  const dropped = prunedLines(plan?.pruned ?? [], events)
  if (!plan) {
    if (options.json) json({ type: 'rewind', sessionId: session.id, turn: start.turn, dryRun: options.dryRun, nothing: true })
    else print([`nothing to rewind: session ${session.id} has no recorded file changes from turn ${start.turn} on`])
  } else if (options.dryRun) {
    incomplete = planIncomplete(plan)
    if (options.json) json({ type: 'rewind-plan', turn: start.turn, ...plan })
    else print([`plan: rewind session ${session.id} to before turn ${start.turn} (dry run: nothing was changed)`, ...planLines(plan, session.header.cwd), ...dropped])
  } else {
    // The session held here takes the notice the model reads next (`ctx.checkpoints` writes it);
    // with --fork it stays as it was, and the fork carries the conversation on instead.
    const result = await busyAsSuch(session.id, () => checkpoints.rewind(session.id, anchors, { session, notify: !options.fork }))
    incomplete = resultIncomplete(result)
    if (options.json) json({ type: 'rewind', turn: start.turn, ...result })
    else print([`rewound session ${session.id} to before turn ${start.turn}`, ...resultLines(result, session.header.cwd), ...dropped, ...leftAlone(result)])
  }
  if (options.fork) await fork(scope, session, choice, print, json)
  return incomplete ? EXIT.rewindIncomplete : EXIT.ok
}

/** The plan for going back before the first of `anchors` (the turn's, then every later turn's); `undefined` when it has nothing to say. */
async function planFrom(checkpoints: CheckpointService, sessionId: string, anchors: readonly string[], checkContents: boolean): Promise<RewindPlan | undefined> {
  if (anchors.length === 0) return undefined
  const plan = await checkpoints.plan(sessionId, anchors, { checkContents })
  return plan.items.length > 0 || plan.notCovered.length > 0 || plan.pruned.length > 0 ? plan : undefined
}

/** A line naming the turns whose checkpoints retention dropped: the rewind cannot undo them, however whole it looks. */
function prunedLines(pruned: readonly string[], events: readonly SessionEvent[]): string[] {
  if (pruned.length === 0) return []
  const dropped = new Set(pruned)
  const turns = [...new Set(sessionTurns(events).filter((turn) => turn.anchor !== undefined && dropped.has(turn.anchor)).map((turn) => turn.turn))]
  const named = turns.length === 1 ? `turn ${turns[0]}` : `turns ${turns.join(', ')}`
  return [`the checkpoints of ${named} were dropped by retention (keepTurns, keepDays, maxSessionBytes of @rein/checkpoint): what ${turns.length === 1 ? 'it' : 'they'} changed is not undone`]
}

/** What a person should do about files the rewind did not touch. */
function leftAlone(result: RewindResult): string[] {
  if (result.drifted.length + result.skipped.length + result.failed.length === 0) return []
  return ['files not restored were left as they were before this rewind (not undone): compare them by hand (rein show lists what each turn did)']
}

async function fork(scope: SessionScope, session: Session, { start }: TurnChoice, print: (lines: string[]) => void, json: (value: object) => void): Promise<void> {
  const { options } = scope
  // At least 1: a fork before turn 1 was refused before anything was done.
  const kept = start.turn - 1
  const what = `turn${kept === 1 ? '' : 's'} 1${kept === 1 ? '' : `-${kept}`} of session ${session.id}`
  if (options.dryRun) {
    if (options.json) json({ type: 'fork', sessionId: null, dryRun: true, turns: kept })
    else print([`--fork would start a new session holding ${what} (the log before turn ${start.turn})`])
    return
  }
  let report: ForkReport
  try {
    report = await forkSession(scope.ctx, session.header, session.events, start.seq)
  } catch (error) {
    throw new ReinError('FORK_FAILED', `the fork could not be created (what is printed above stands): ${isReinError(error) ? error.message : String(error)}`, { cause: error })
  }
  if (options.json) json({ type: 'fork', ...report, from: session.id, turns: kept })
  else {
    const dropped = report.dropped === 0 ? '' : ` (${report.dropped} bookkeeping event${report.dropped === 1 ? '' : 's'} of plugins not loaded left out)`
    print([`fork ${report.sessionId}: a new session holding ${what}${dropped}; rein resume ${report.sessionId} "…" continues from there, and session ${session.id} keeps its turns`])
  }
}

function requireCheckpoints(scope: SessionScope): CheckpointService {
  const checkpoints = scope.ctx.get('checkpoints')
  if (checkpoints) return checkpoints
  throw new ReinError('CONFIG_INVALID', `${scope.source === 'built-in' ? 'the built-in composition' : scope.source} has no @rein/checkpoint row, which rein rewind needs (with @rein/checkpoint-jsonl, where the records are kept)`)
}

/** Claims the session for the rewind; one another process holds is refused, saying which. */
async function claim(ctx: Context, id: string): Promise<Session> {
  return busyAsSuch(id, () => ctx.sessions.open(id))
}

/** A session in use — claimed by another process, or running a turn here — as one clear refusal. */
async function busyAsSuch<T>(id: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body()
  } catch (error) {
    if (!isReinError(error, 'SESSION_LOCKED') && !isReinError(error, 'SESSION_BUSY')) throw error
    const pid = error.details?.pid
    const who = typeof pid === 'number' && pid !== process.pid ? `process ${pid}` : 'another rein (a chat, run or resume)'
    const end = typeof pid === 'number' && pid !== process.pid ? `, or end it (kill ${pid})` : ''
    throw new ReinError('SESSION_BUSY', `session ${id} is in use by ${who}; wait for it to finish${end}, then rewind`, { cause: error, ...(error.details ? { details: error.details } : {}) })
  }
}
