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
