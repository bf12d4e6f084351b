/** Checks a definition once, at registration, and compiles what the pipeline and the model need. */

import { ReinError } from '@rein/base'
import { isRawSchema, type AnyToolDefinition } from './define-tool.ts'
import { assertSupportedSchema, canonicalSchema, type JsonSchema } from './json-schema.ts'
import { compileProperties, compileValue } from './schema-dsl.ts'

/** The model-facing part of a tool: the only fields that ever reach a request. */
export interface ToolSchema {
  name: string
  description: string
  parameters: JsonSchema
}

export interface PreparedTool {
  definition: AnyToolDefinition
  schema: ToolSchema
  output: JsonSchema
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/

/** Throws `INVALID_TOOL_DEFINITION` naming the tool and the field at fault. */
export function prepareTool(definition: AnyToolDefinition): PreparedTool {
  const label = typeof definition?.name === 'string' ? `tool "${definition.name}"` : 'tool'
  const fail = (message: string, cause?: unknown): never => {
    throw new ReinError('INVALID_TOOL_DEFINITION', `${label}: ${message}`, { cause })
  }
  if (typeof definition !== 'object' || definition === null) fail('a definition must be an object')
  if (typeof definition.name !== 'string' || !NAME.test(definition.name)) {
    fail('name must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"')
  }
  if (typeof definition.description !== 'string' || definition.description.trim() === '') fail('description must be a non-empty string')
  if (typeof definition.execute !== 'function') fail('execute must be a function')
  if (typeof definition.output !== 'object' || definition.output === null) fail('output is required: {schema, render}')
  if (typeof definition.output.render !== 'function') fail('output.render must be a function')
  if (definition.timeoutMs !== undefined && !(Number.isFinite(definition.timeoutMs) && definition.timeoutMs > 0)) {
    fail('timeoutMs must be a positive, finite number of milliseconds')
  }
  for (const key of ['presentCall', 'presentResult', 'summarize'] as const) {
    if (definition[key] !== undefined && typeof definition[key] !== 'function') fail(`${key} must be a function`)
  }
  const parameters = compileSchema(() => compileParameters(definition.parameters), 'parameters', fail)
  const output = compileSchema(() => compileOutput(definition.output.schema), 'output.schema', fail)
  return {
    definition,
    schema: { name: definition.name, description: definition.description, parameters },
    output,
  }
}

function compileSchema(compile: () => JsonSchema, field: string, fail: (message: string, cause?: unknown) => never): JsonSchema {
  try {
    const schema = compile()
    assertSupportedSchema(schema)
    return canonicalSchema(schema)
  } catch (error) {
    return fail(`${field}: ${error instanceof Error ? error.message : String(error)}`, error)
  }
}

function compileParameters(parameters: unknown): JsonSchema {
  if (isRawSchema(parameters)) {
    if (parameters.schema.type !== 'object') throw new Error('$: a parameters schema must have type "object"')
    return parameters.schema
  }
  return { type: 'object', ...compileProperties(parameters), additionalProperties: false }
}

function compileOutput(schema: unknown): JsonSchema {
  return isRawSchema(schema) ? schema.schema : compileValue(schema)
}
