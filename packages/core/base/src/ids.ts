/** Branded id types: plain strings at run time, distinct types at compile time. */

declare const brand: unique symbol

/** `T` tagged with the name `B`, so ids of different kinds cannot be mixed up. */
export type Brand<T, B extends string> = T & { readonly [brand]: B }

/** A session's id. */
export type SessionId = Brand<string, 'SessionId'>
/** A tool call's id, as the model gave it (or rein made it). */
export type CallId = Brand<string, 'CallId'>
/** A message's id in a session log. */
export type MessageId = Brand<string, 'MessageId'>
/** A run's id: one turn, compaction or repair of one agent. */
export type RunId = Brand<string, 'RunId'>
/** A background job's id. */
export type JobId = Brand<string, 'JobId'>
