/**
 * @rein/session: the `ctx.sessions` service — the append-only session log, the messages derived
 * from it, and crash repair. Stores (`@rein/session-jsonl`) register on it.
 */

import { SessionService } from './service.ts'

export default SessionService
export { SessionService, type CreateSessionOptions, type SessionParent } from './service.ts'
export { Session } from './session.ts'
export {
  SESSION_FORMAT_VERSION, CORE_EVENT_TYPES,
  type SessionHeader, type SessionEvent, type EventDraft, type CoreEventData, type CoreEventType, type CoreEvent, type TurnEndReason,
  type TurnOverrun, type StepRequest, type SummaryStart, type LlmResend, type ContextCompacted,
} from './events.ts'
export { eventData } from './event-data.ts'
/** The id of the user message a `turn/start` at an index of a log answers (its `anchor`, or in an older log the message after it). */
export { turnAnchor } from './event-data.ts'
export { refuseMisshapenEvents } from './event-shape.ts'
export { deriveMessages, capContent, MessageProjection, applyCompaction, argumentsStub, changesHistory, prunedStub, summaryMessage, SUMMARY_OPENING, KEPT_NOTE } from './derive.ts'
export { planRepair, repairEvents, isClean, type RepairPlan, type RepairCall, type RepairAction } from './repair.ts'
export type { SessionStore, SessionSummary, SessionStatus, LoadedSession, ListOptions, OpenOptions } from './store.ts'
export { MemorySessionStore } from './memory-store.ts'
export { sessionMemory } from './memory-plugin.ts'
export { summarize, spending, SessionSummarizer, TITLE_SCAN_CHARS, type Spending } from './summary.ts'
