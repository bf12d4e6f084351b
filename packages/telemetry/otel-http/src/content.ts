/**
 * Content as the GenAI conventions shape it (v1.41 `gen-ai-input-messages.json` and
 * `gen-ai-output-messages.json`), as JSON strings: only called when Config `captureContent` is true.
 * The records hand rein's message shape over as `unknown`, so every field is checked before use.
 */

import type { Attributes } from '@opentelemetry/api'
import type { LlmCallEndRecord, ToolCallEndRecord } from '@rein/telemetry'
import { mapFinishReason } from './attributes.ts'
import { ATTR } from './semconv.ts'

type ChatContent = ReturnType<NonNullable<LlmCallEndRecord['content']>>
type ToolContent = ReturnType<NonNullable<ToolCallEndRecord['content']>>

/** A message part in the conventions' shape. */
type Part = Record<string, unknown> & { type: string }

/** `gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.tool.definitions`, `gen_ai.output.messages`. */
export function chatContentAttributes(content: ChatContent, finishReason: string | undefined): Attributes {
  return {
    ...(content.system !== undefined && content.system !== '' ? { [ATTR.systemInstructions]: JSON.stringify([{ type: 'text', content: content.system }]) } : {}),
    [ATTR.inputMessages]: JSON.stringify(content.messages.map(toConventionMessage).filter((message) => message !== undefined)),
    ...(content.tools && content.tools.length > 0 ? { [ATTR.toolDefinitions]: JSON.stringify(content.tools.map(toToolDefinition)) } : {}),
    ...(content.output !== undefined ? { [ATTR.outputMessages]: JSON.stringify([{ role: 'assistant', parts: toParts(content.output), finish_reason: outputFinishReason(finishReason ?? 'stop') }]) } : {}),
  }
}

/**
 * An output message's `finish_reason` as v1.41's `gen-ai-output-messages.json` lists it (`stop`,
 * `length`, `content_filter`, `tool_call`, `error`): the schema says `tool_call` where the span
 * attribute keeps the provider's `tool_calls`. Other reasons (`aborted`) go as they are; the schema
 * takes any string.
 */
function outputFinishReason(reason: string): string {
  const mapped = mapFinishReason(reason)
  return mapped === 'tool_calls' ? 'tool_call' : mapped
}

/** `gen_ai.tool.call.arguments` (the model's JSON text as written) and `gen_ai.tool.call.result` (the text the model reads). */
export function toolContentAttributes(content: ToolContent): Attributes {
  return { [ATTR.toolCallArguments]: content.arguments, [ATTR.toolCallResult]: content.result }
}

/** One rein message: tool results (a user message of `tool-result` blocks) become the `tool` role. */
function toConventionMessage(message: unknown): Record<string, unknown> | undefined {
  if (!isRecord(message) || typeof message.role !== 'string' || !Array.isArray(message.content)) return undefined
  const blocks: readonly unknown[] = message.content
  const results = blocks.length > 0 && blocks.every((block) => isRecord(block) && block.type === 'tool-result')
  return { role: results ? 'tool' : message.role, parts: toParts(blocks) }
}

function toParts(blocks: readonly unknown[]): Part[] {
  return blocks.flatMap((block): Part[] => {
    if (!isRecord(block)) return []
    switch (block.type) {
      case 'text': return [{ type: 'text', content: text(block.text) }]
      case 'reasoning': return [{ type: 'reasoning', content: text(block.text) }]
      case 'image': return [{ type: 'uri', modality: 'image', ...(typeof block.mediaType === 'string' ? { mime_type: block.mediaType } : {}), uri: text(block.url) }]
      case 'tool-call': return [{ type: 'tool_call', id: block.id, name: block.name, arguments: parseArguments(block.arguments) }]
      case 'tool-result': return [{ type: 'tool_call_response', id: block.toolCallId, response: resultText(block.content) }]
      default: return [{ type: String(block.type) }]
    }
  })
}

function toToolDefinition(tool: unknown): Record<string, unknown> {
  if (!isRecord(tool)) return { type: 'function' }
  return { type: 'function', name: tool.name, description: tool.description, parameters: tool.parameters }
}

/** The model's arguments as an object when they parse, else the text as written. */
function parseArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw
  try {
    return JSON.parse(raw) as unknown
  } catch {
    return raw
  }
}

function resultText(content: unknown): string {
  if (!Array.isArray(content)) return ''
  return content.map((part: unknown) => (isRecord(part) && part.type === 'text' ? text(part.text) : `[${isRecord(part) ? text(part.type) : 'part'}]`)).join('\n')
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : ''
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
