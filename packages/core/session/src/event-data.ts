/** Typed access to a core event's data: the one place a log event's `data` is read as its type. */

import type { CoreEventData, CoreEventType, SessionEvent } from './events.ts'

/**
 * `event.data` as the data of core type `type`. The caller has checked `event.type === type`; the
 * store validated the envelope, and core events are only ever written by rein with this shape.
 */
export function eventData<T extends CoreEventType>(event: SessionEvent, type: T): CoreEventData[T] {
  void type
  return event.data as unknown as CoreEventData[T]
}

/**
 * The anchor of the turn `events[index]` starts (a `turn/start`): the id of the user message it
 * answers. Logs from before `turn/start` carried it have that message right after; undefined when
 * the log cannot say.
 */
export function turnAnchor(events: readonly SessionEvent[], index: number): string | undefined {
  const start = events[index]
  if (start?.type !== 'turn/start') return undefined
  const { anchor } = eventData(start, 'turn/start')
  if (anchor !== undefined) return anchor
  const next = events[index + 1]
  if (next?.type !== 'user/message') return undefined
  const { message } = eventData(next, 'user/message')
  return message.source.kind === 'user' ? message.id : undefined
}
