/**
 * The message model every adapter translates to and from. Messages are immutable: build them with
 * the constructors here, which deep-freeze a JSON copy.
 */

import { toFrozenJson, type JsonValue, type MessageId } from '@rein/base'
import { randomBytes, randomUUID } from 'node:crypto'

/** Plain text, from the user, the model or a tool. */
export interface TextBlock { type: 'text'; text: string }
/** Model reasoning ("thinking"). Providers differ in whether it must be sent back; adapters decide. */
export interface ReasoningBlock { type: 'reasoning'; text: string }
/** An image by reference (a URL, `data:` URL or a store key an adapter understands), never inline bytes. */
export interface ImageBlock { type: 'image'; mediaType: string; url: string }
/** A call the model asked for. `arguments` is the model's raw JSON text, unparsed and unchanged. */
export interface ToolCallBlock { type: 'tool-call'; id: string; name: string; arguments: string }
/** What a tool call returned, matched to the call by `toolCallId`; `isError` when the call failed. */
export interface ToolResultBlock {
  type: 'tool-result'
  toolCallId: string
  content: readonly (TextBlock | ImageBlock)[]
  isError?: boolean
}

/** One part of a message's content. */
export type ContentBlock = TextBlock | ReasoningBlock | ImageBlock | ToolCallBlock | ToolResultBlock
/** Who a message speaks as. */
export type Role = 'system' | 'user' | 'assistant'

/** Where a message came from. `replayState` is opaque provider state an adapter may want back. */
export type MessageSource =
  | { kind: 'user' }
  | { kind: 'model'; provider: string; model: string; replayState?: JsonValue }
  | { kind: 'tool' }
  | { kind: 'plugin'; plugin: string }

/** One immutable message of a conversation; build it with `createMessage` and the helpers below. */
export interface Message {
  readonly id: MessageId
  readonly role: Role
  readonly content: readonly ContentBlock[]
  readonly source: MessageSource
}

/** Builds a frozen message; `id` defaults to a random UUID. */
export function createMessage(role: Role, content: readonly ContentBlock[], source: MessageSource, id?: string): Message {
  return toFrozenJson({ id: id ?? randomUUID(), role, content, source }) as unknown as Message
}

/** A user message holding one text block. */
export function userMessage(text: string, id?: string): Message {
  return createMessage('user', [{ type: 'text', text }], { kind: 'user' }, id)
}

/** An assistant message with the model's content and the route that produced it. */
export function assistantMessage(content: readonly ContentBlock[], source: Extract<MessageSource, { kind: 'model' }>, id?: string): Message {
  return createMessage('assistant', content, source, id)
}

/** Tool results travel in a user-role message, one block per call, in the order the model asked. */
export function toolResultMessage(results: readonly Omit<ToolResultBlock, 'type'>[], id?: string): Message {
  return createMessage('user', results.map((result) => ({ type: 'tool-result' as const, ...result })), { kind: 'tool' }, id)
}

/** A fresh tool-call id, `call_` and 24 random URL-safe characters: for calls a server sent without one, or with one already used. */
export function newToolCallId(): string {
  return `call_${randomBytes(18).toString('base64url')}`
}
