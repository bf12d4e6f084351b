/**
 * Commands a kill cut off. The walk after a command records what it changed; a kill mid-command
 * leaves no walk after it, and the next process's first walk takes its changes for the workspace as
 * it was. Repair pairs such a call with `COMMAND_INTERRUPTED` (its processes were still running) or
 * `TOOL_OUTCOME_UNKNOWN`: the session log is where a rewind learns of them.
 */

import { eventData, type SessionEvent } from '@rein/session'
import { commandLabel } from './coverage.ts'

/** Results repair gives a call whose body had begun when rein was killed. */
const CUT_OFF = new Set(['COMMAND_INTERRUPTED', 'TOOL_OUTCOME_UNKNOWN'])

/**
 * One line per command `covered` names that a kill cut off, in the turns from the first of
 * `anchors` on (a rewind undoes every turn after the one it goes back before), as they ran.
 */
export function cutOffCommands(events: readonly SessionEvent[], anchors: ReadonlySet<string>, covered: (toolName: string) => boolean): string[] {
  let rewound = false
  const labels = new Map<string, string>()
  const lines: string[] = []
  events.forEach((event, index) => {
    if (event.type === 'turn/start') rewound ||= anchors.has(turnAnchor(event, events[index + 1]) ?? '')
    else if (!rewound) return
    else if (event.type === 'tool/call') {
      const { callId, name, arguments: raw } = eventData(event, 'tool/call')
      if (covered(name)) labels.set(callId, commandLabel(name, parsed(raw)))
    } else if (event.type === 'tool/result') {
      const { callId, isError, code } = eventData(event, 'tool/result')
      const label = labels.get(callId)
      if (label !== undefined && isError && code !== undefined && CUT_OFF.has(code)) {
        lines.push(`\`${label}\` was cut off when rein was stopped (${code}): what it changed was not recorded and is not undone; check by hand`)
      }
    }
  })
  return lines
}

/** The id of the message that started the turn; logs before `anchor` was written have it next. */
function turnAnchor(start: SessionEvent, next: SessionEvent | undefined): string | undefined {
  const { anchor } = eventData(start, 'turn/start')
  if (anchor !== undefined) return anchor
  if (next?.type !== 'user/message') return undefined
  const { message } = eventData(next, 'user/message')
  return message.source.kind === 'user' ? message.id : undefined
}

function parsed(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown
  } catch {
    return raw
  }
}
