/** Branded id types: plain strings at run time, distinct types at compile time. */

declare const brand: unique symbol

/** `T` tagged with the name `B`, so ids of different kinds cannot be mixed up. */
export type Brand<T, B extends string> = T & { readonly [brand]: B }

export type SessionId = Brand<string, 'SessionId'>
export type CallId = Brand<string, 'CallId'>
export type MessageId = Brand<string, 'MessageId'>
export type RunId = Brand<string, 'RunId'>
export type JobId = Brand<string, 'JobId'>
