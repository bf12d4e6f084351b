/** rein request → OpenAI wire request. Pure, deterministic: the same request gives the same bytes. */

import { isFrozenJson } from '@rein/base'
import type { AdapterRequest, ContentBlock, ImageBlock, Message, TextBlock, ToolResultBlock, ToolSpec } from '@rein/llm'
import type { OpenAiDialect } from './dialect.ts'
import type { WireContentPart, WireMessage, WireRequest, WireToolCall } from './wire.ts'

/** Request-side settings that are not per request. */
export interface RequestDefaults {
  maxTokensField: 'max_tokens' | 'max_completion_tokens'
}

/** The whole wire request for one attempt. */
export function toWireRequest(request: AdapterRequest, defaults: RequestDefaults, dialect: OpenAiDialect): WireRequest {
  return { model: request.model, messages: toWireMessages(request, dialect), ...requestFields(request, defaults, dialect) }
}

/**
 * `JSON.stringify(toWireRequest(…))`, byte for byte, built from what the requests before made: each
 * message's JSON, and the joined JSON of a conversation's messages so far, so a request whose
 * messages extend the last one's only converts what was appended.
 */
export function toWireBody(request: AdapterRequest, defaults: RequestDefaults, dialect: OpenAiDialect): string {
  const system = request.system ? JSON.stringify({ role: 'system', content: request.system }) : ''
  const messages = dialect.alternating && mayNotAlternate(request.messages) ? alternated(wireOf(request.messages, dialect)).map((wire) => JSON.stringify(wire)).join(',') : messagesJson(request.messages, dialect)
  const all = system === '' ? messages : messages === '' ? system : `${system},${messages}`
  const head = `{"model":${JSON.stringify(request.model)},"messages":[${all}],`
  const options = optionFields(request, defaults, dialect)
  // A dialect that sets a field set before it (stream, stream_options, tools) overrides it in place.
  if (FIXED_FIELDS.some((field) => field in options)) return `${head}${JSON.stringify(requestFields(request, defaults, dialect)).slice(1)}`
  const tools = request.tools && request.tools.length > 0 ? `,"tools":${toolsJson(request.tools)}` : ''
  const rest = JSON.stringify(options)
  return `${head}${STREAMING_JSON}${tools}${rest === '{}' ? '' : `,${rest.slice(1, -1)}`}}`
}

/** A conversation's last request: its messages (the objects) and their joined JSON. */
interface Joined {
  messages: readonly Message[]
  json: string
}

/** By dialect, then by a conversation's first message; weak, so a finished conversation goes with it. */
const joinedByStart = new WeakMap<OpenAiDialect, WeakMap<Message, Joined>>()

function messagesJson(messages: readonly Message[], dialect: OpenAiDialect): string {
  const first = messages[0]
  if (first === undefined || !isFrozenJson(first)) return join(messages, 0, '', dialect)
  let cache = joinedByStart.get(dialect)
  if (cache === undefined) joinedByStart.set(dialect, cache = new WeakMap())
  const last = cache.get(first)
  // Reused only when every message of the last request is the same object at the same place: a
  // compaction that replaced one in the middle starts over.
  const extends_ = last !== undefined && last.messages.length <= messages.length && last.messages.every((message, i) => messages[i] === message)
  const json = extends_ ? join(messages, last.messages.length, last.json, dialect) : join(messages, 0, '', dialect)
  cache.set(first, { messages: messages.slice(), json })
  return json
}

/** `head` (the JSON of `messages` before `from`) joined with the JSON of the rest. */
function join(messages: readonly Message[], from: number, head: string, dialect: OpenAiDialect): string {
  let json = head
  for (let i = from; i < messages.length; i++) {
    const part = jsonOf(messages[i]!, dialect)
    if (part !== '') json = json === '' ? part : `${json},${part}`
  }
  return json
}

/** Everything of the wire request but the model and the messages. */
type WireFields = Pick<WireRequest, 'tools' | 'max_tokens' | 'max_completion_tokens' | 'temperature' | 'stream' | 'stream_options'> & Record<string, unknown>

function requestFields(request: AdapterRequest, defaults: RequestDefaults, dialect: OpenAiDialect): WireFields {
  const fields: WireFields = { stream: true, stream_options: { include_usage: true } }
  if (request.tools && request.tools.length > 0) fields.tools = wireTools(request.tools)
  return Object.assign(fields, optionFields(request, defaults, dialect))
}

/** `stream` and `stream_options` as `JSON.stringify` spells them: the same for every request. */
const STREAMING_JSON = '"stream":true,"stream_options":{"include_usage":true}'
const FIXED_FIELDS = ['stream', 'stream_options', 'tools']

/** The fields after the tools: the output cap, temperature and the dialect's effort fields. */
function optionFields(request: AdapterRequest, defaults: RequestDefaults, dialect: OpenAiDialect): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  if (request.maxTokens !== undefined) fields[defaults.maxTokensField] = request.maxTokens
  if (request.temperature !== undefined) fields.temperature = request.temperature
  return Object.assign(fields, dialect.effortFields(request.reasoningEffort))
}

function wireTools(tools: readonly ToolSpec[]): WireRequest['tools'] {
  return tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } }))
}

/**
 * The JSON of a frozen tool list whose schemas are frozen JSON (the registry's: every step sends
 * the same list), made once; any other list is converted each time, as it may change.
 */
const toolLists = new WeakMap<readonly ToolSpec[], string>()

function toolsJson(tools: readonly ToolSpec[]): string {
  // Only a list that passed the check is kept, and it cannot change: a hit needs no check again.
  const known = toolLists.get(tools)
  if (known !== undefined) return known
  const json = JSON.stringify(wireTools(tools))
  if (Object.isFrozen(tools) && tools.every(isFrozenJson)) toolLists.set(tools, json)
  return json
}

/** The system text and messages as wire messages, in order. */
export function toWireMessages(request: Pick<AdapterRequest, 'system' | 'messages'>, dialect: OpenAiDialect): WireMessage[] {
  const messages = dialect.alternating ? alternated(wireOf(request.messages, dialect)) : wireOf(request.messages, dialect)
  return request.system ? [{ role: 'system', content: request.system }, ...messages] : messages
}

function wireOf(messages: readonly Message[], dialect: OpenAiDialect): WireMessage[] {
  const out: WireMessage[] = []
  for (const message of messages) out.push(...convert(message, dialect))
  return out
}

/**
 * Whether two messages of one role meet, or an answer ends the conversation: more than needs
 * merging (results then a note are two user messages that convert to `tool` then `user`), but
 * cheap, and a conversation that alternates is converted from its cache.
 */
function mayNotAlternate(messages: readonly Message[]): boolean {
  let previous: Message['role'] | undefined
  for (const message of messages) {
    // A user message with nothing a wire message carries converts to none: its neighbours meet.
    if (message.role === 'user' && !message.content.some((block) => block.type !== 'reasoning' && block.type !== 'tool-call')) continue
    if (message.role === previous) return true
    previous = message.role
  }
  return previous === 'assistant'
}

/** Wire messages where no two user messages, nor two answers after one without calls, meet, ending without a bare answer. */
function alternated(messages: readonly WireMessage[]): WireMessage[] {
  const out: WireMessage[] = []
  for (const message of messages) {
    const last = out.at(-1)
    if (last?.role === 'user' && message.role === 'user') out[out.length - 1] = { role: 'user', content: joinedContent(last.content, message.content) }
    else if (last?.role === 'assistant' && last.tool_calls === undefined && message.role === 'assistant') out[out.length - 1] = mergedAnswers(last, message)
    else out.push(message)
  }
  const end = out.at(-1)
  if (end?.role === 'assistant' && end.tool_calls === undefined) out.pop()
  return out
}

type WireAnswer = Extract<WireMessage, { role: 'assistant' }>

/** Two answers as one: texts joined, the later one's calls, both reasonings; `null` text only beside calls, as `toAssistant` sends it. */
function mergedAnswers(first: WireAnswer, second: WireAnswer): WireAnswer {
  const text = [first.content, second.content].filter((part) => part).join('\n\n')
  const reasoning = [first.reasoning_content, second.reasoning_content].filter((part) => part !== undefined)
  return {
    ...first,
    ...second,
    content: text === '' && second.tool_calls ? null : text,
    ...(reasoning.length > 0 ? { reasoning_content: reasoning.join('') } : {}),
  }
}

function joinedContent(a: string | WireContentPart[], b: string | WireContentPart[]): string | WireContentPart[] {
  if (typeof a === 'string' && typeof b === 'string') return `${a}\n\n${b}`
  const parts = (content: string | WireContentPart[]): WireContentPart[] => (typeof content === 'string' ? [{ type: 'text', text: content }] : content)
  return [...parts(a), ...parts(b)]
}

/**
 * The JSON of frozen messages' wire messages (`toFrozenJson` made them, as sessions' are: they
 * cannot change), by dialect, comma-separated. Weak: a message no session holds any more takes its
 * JSON with it. A dialect's `assistantFields` must depend on the message alone, as it is cached.
 */
const conversions = new WeakMap<OpenAiDialect, WeakMap<Message, string>>()

function jsonOf(message: Message, dialect: OpenAiDialect): string {
  const make = () => convert(message, dialect).map((wire) => JSON.stringify(wire)).join(',')
  if (!isFrozenJson(message)) return make()
  let cache = conversions.get(dialect)
  if (cache === undefined) conversions.set(dialect, cache = new WeakMap())
  let json = cache.get(message)
  if (json === undefined) cache.set(message, json = make())
  return json
}

function convert(message: Message, dialect: OpenAiDialect): WireMessage[] {
  if (message.role === 'system') return [{ role: 'system', content: joinText(message.content, '\n\n') }]
  if (message.role === 'assistant') return [toAssistant(message, dialect)]
  return toUser(message.content)
}

function toAssistant(message: Message, dialect: OpenAiDialect): WireMessage {
  const calls: WireToolCall[] = []
  for (const block of message.content) {
    if (block.type === 'tool-call') calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: block.arguments } })
  }
  const text = joinText(message.content, '')
  return {
    role: 'assistant',
    content: text === '' && calls.length > 0 ? null : text,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
    ...dialect.assistantFields(message),
  }
}

/** Tool results become `tool` messages, in order, before any other content of the same message. */
function toUser(content: readonly ContentBlock[]): WireMessage[] {
  const out: WireMessage[] = []
  const rest: (TextBlock | ImageBlock)[] = []
  for (const block of content) {
    if (block.type === 'tool-result') out.push({ role: 'tool', tool_call_id: block.toolCallId, content: toolResultText(block) })
    else if (block.type === 'text' || block.type === 'image') rest.push(block)
  }
  if (rest.length > 0) {
    const hasImage = rest.some((block) => block.type === 'image')
    out.push({ role: 'user', content: hasImage ? rest.map(toPart) : joinText(rest, '\n\n') })
  }
  return out
}

function toPart(block: TextBlock | ImageBlock): WireContentPart {
  return block.type === 'text' ? { type: 'text', text: block.text } : { type: 'image_url', image_url: { url: block.url } }
}

/** Tool messages carry text only on this wire; an image becomes a line naming it. */
function toolResultText(block: ToolResultBlock): string {
  return block.content.map((part) => (part.type === 'text' ? part.text : `[image ${part.mediaType}: ${part.url}]`)).join('\n')
}

function joinText(content: readonly ContentBlock[], separator: string): string {
  return content.filter((block): block is TextBlock => block.type === 'text').map((block) => block.text).join(separator)
}
