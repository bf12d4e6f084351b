/** Checks a definition once, at registration, and compiles what the pipeline and the model need. */

import { closest, isReinError, kindOf, MAX_TIMER_MS, ReinError, toFrozenJson } from '@rein/base'
import { isRawSchema, type AnyToolDefinition, type ToolVariant } from './define-tool.ts'
import { jsonSchemaAsProperties, misplacedDefinitionKey, shown, suggestName } from './author-hints.ts'
import type { ToolInfo } from './hooks.ts'
import type { RunIdentity } from './run-context.ts'
import { defaultReplaySafe, isToolEffect, TOOL_EFFECTS, type ToolEffect } from './effects.ts'
import { canonicalSchema, type JsonSchema } from './json-schema.ts'
import { assertSupportedSchema } from './schema-check.ts'
import { compileProperties, compileValue } from './schema-dsl.ts'
import { isThenable } from './thenable.ts'

/** The model-facing part of a tool: the only fields that ever reach a request. */
export interface ToolSchema {
  name: string
  description: string
  parameters: JsonSchema
}

export interface PreparedTool {
  /** The registry's own frozen copy: later changes to the object passed to `register` change nothing. */
  definition: Readonly<AnyToolDefinition>
  /** What hooks see as `call.tool`. */
  info: ToolInfo
  schema: ToolSchema
  /** What runs its `variantFor` names are shown instead of `schema`, by variant name; frozen like it. */
  variants: ReadonlyMap<string, ToolSchema>
  output: JsonSchema
  /** Its calls whose body is running, each as what stops it: removing the tool stops them. */
  running: Set<StopCall>
  /** Set when the registry removed it: a call still deciding (approval, a wrapper) never starts its body. */
  removed: boolean
}

/** Cancels a call whose body is running, with `reason`, as its caller's abort would (the tool's grace included). */
type StopCall = (reason: unknown) => void

const NAME = /^[A-Za-z0-9_-]{1,64}$/
/** setTimeout turns a longer delay into 1 ms, so a deadline past it would fire at once. */
export const MAX_TIMEOUT_MS = MAX_TIMER_MS
/** The longest a cancelled call may wait for its body's own answer. */
const MAX_CANCEL_GRACE_MS = 10_000

/** Throws `INVALID_TOOL_DEFINITION` naming the tool, the field at fault, what it got and what to do. */
export function prepareTool(input: AnyToolDefinition): PreparedTool {
  const label = typeof input?.name === 'string' ? `tool "${input.name}"` : 'tool'
  const fail = (message: string, cause?: unknown, details: Record<string, unknown> = {}): never => {
    const tool = typeof input?.name === 'string' ? { tool: input.name } : {}
    throw new ReinError('INVALID_TOOL_DEFINITION', `${label}: ${message}`, { ...(cause === undefined ? {} : { cause }), details: { ...tool, ...details } })
  }
  if (typeof input !== 'object' || input === null) {
    fail(`register() needs a tool definition, the object defineTool({...}) returns, but got ${kindOf(input)} (check the import)`)
  }
  if (typeof input.output !== 'object' || input.output === null) {
    fail("output is required but missing; add output: {schema, render}, e.g. {schema: {type: 'string'}, render: (args, value) => value}")
  }
  // One read of every field: a getter cannot answer differently later, and a later change to the
  // caller's object cannot reach the registry.
  const definition: Readonly<AnyToolDefinition> = Object.freeze({ ...input, output: Object.freeze({ ...input.output }) })
  checkKeys(definition, fail)
  checkRequiredFields(definition, fail)
  checkTiming(definition, fail)
  const { timeoutMs, cancelGraceMs } = definition
  const effects = checkEffects(definition.effects, fail)
  checkFlagsAndFunctions(definition, fail)
  const parameters = compileSchema(() => compileParameters(definition.parameters), 'parameters', fail)
  const output = compileSchema(() => compileOutput(definition.output.schema), 'output.schema', fail)
  const info: ToolInfo = Object.freeze({
    name: definition.name,
    description: definition.description,
    parameters,
    effects,
    replaySafe: definition.replaySafe ?? defaultReplaySafe(definition.effects),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(cancelGraceMs ? { cancelGraceMs } : {}),
    ...(definition.recoverAfterInterrupt === true ? { recoverAfterInterrupt: true as const } : {}),
  })
  // Frozen JSON (marked): a provider can cache the wire JSON of a list of them by the list. No depth
  // limit of its own: `parameters` was held to it, and this only adds the level around it.
  const schema = modelSchema(definition.name, definition.description, parameters)
  const variants = compileVariants(definition, schema, fail)
  return { definition, info, schema, variants, output, running: new Set(), removed: false }
}

/**
 * Whether a caller may see and run a registered tool: its `visible` list allows the name and the
 * tool's `availableTo` its run (asked only when the caller is an agent's run; throwing = no).
 */
export function usableBy(prepared: PreparedTool | undefined, caller: { readonly visible?: (name: string) => boolean; readonly identity?: RunIdentity } | undefined): boolean {
  if (prepared === undefined) return false
  if (caller?.visible && !caller.visible(prepared.info.name)) return false
  const check = prepared.definition.availableTo
  if (caller?.identity === undefined || check === undefined) return true
  try {
    return isTrue(check(caller.identity))
  } catch {
    return false
  }
}

/**
 * What a run is shown of a tool: the variant its `variantFor` names (asked only for an agent's run),
 * else the tool as defined, as for a name it has no variant of, a throw or a promise.
 */
export function schemaFor(prepared: PreparedTool, identity: RunIdentity | undefined): ToolSchema {
  const pick = prepared.definition.variantFor
  if (identity === undefined || pick === undefined) return prepared.schema
  try {
    const name: unknown = pick(identity)
    if (isThenable(name)) name.then(undefined, () => {})
    return (typeof name === 'string' ? prepared.variants.get(name) : undefined) ?? prepared.schema
  } catch {
    return prepared.schema
  }
}

/**
 * Whether a synchronous predicate said exactly `true`. An async one (a promise) says no, and its
 * rejection is handled here: never awaited, it would otherwise end the process as unhandled.
 */
export function isTrue(answer: unknown): boolean {
  if (isThenable(answer)) answer.then(undefined, () => {})
  return answer === true
}

/** Every key a definition may have; a key missing here, or one the type lacks, fails to compile. */
const DEFINITION_KEYS: Record<keyof AnyToolDefinition, true> = {
  name: true, description: true, parameters: true, output: true, execute: true, isConcurrencySafe: true, effects: true,
  replaySafe: true, recover: true, recoverAfterInterrupt: true, timeoutMs: true, cancelGraceMs: true,
  presentCall: true, presentResult: true, summarize: true, availableTo: true, variants: true, variantFor: true,
}
const OUTPUT_KEYS: Record<keyof AnyToolDefinition['output'], true> = { schema: true, render: true, presentationMeta: true }

/**
 * No key the type lacks: one would be a typo or a wish (`effect: ['write']`, `needsApproval`) that,
 * ignored, leaves the tool running unasked.
 */
function checkKeys(definition: Readonly<AnyToolDefinition>, fail: Fail) {
  refuseUnknownKeys(Object.keys(definition), DEFINITION_KEYS, { takes: 'a definition takes', hint: (key) => misplacedDefinitionKey(key, Reflect.get(definition, key)) }, fail)
  refuseUnknownKeys(Object.keys(definition.output), OUTPUT_KEYS, { field: 'output', takes: 'output takes' }, fail)
}

type Fail = (message: string, cause?: unknown, details?: Record<string, unknown>) => never

/** Where unknown keys are looked for: the field they sit under (none: the definition itself), and how its key list is introduced. */
interface KeyScope {
  field?: string
  takes: string
  /** What the author meant by a key that is no misspelling, as the message's tail; undefined for none. */
  hint?: (key: string) => string | undefined
}

/** Fails on the first of `keys` that `allowed` lacks, naming the nearest allowed key, else every one. */
function refuseUnknownKeys(keys: readonly string[], allowed: Record<string, true>, scope: KeyScope, fail: Fail) {
  for (const key of keys) {
    if (Object.hasOwn(allowed, key)) continue
    const names = Object.keys(allowed)
    const near = closest(key, names)
    const why = scope.hint?.(key) ?? ` (${near ? `did you mean "${near}"?` : `${scope.takes} ${names.join(', ')}`})`
    fail(`${scope.field ? `${scope.field}: ` : ''}unknown key "${key}"${why}`, undefined, { field: scope.field ?? key, key })
  }
}

/** The fields every tool has: what the model reads, and the functions the registry calls. */
function checkRequiredFields(definition: Readonly<AnyToolDefinition>, fail: (message: string) => never) {
  const { name } = definition
  if (typeof name !== 'string' || !NAME.test(name)) {
    const suggestion = suggestName(name)
    const hint = suggestion ? `; e.g. "${suggestion}"` : typeof name === 'string' ? '' : `, but got ${kindOf(name)}`
    fail(`name must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-"${hint}`)
  }
  if (typeof definition.description !== 'string' || definition.description.trim() === '') {
    fail(`description must be a non-empty string saying what the tool does and when to use it (the model reads it), but got ${shown(definition.description)}`)
  }
  if (typeof definition.execute !== 'function') fail(`execute must be a function, (args, run) => value, but got ${shown(definition.execute)}`)
  // Read as data (not a method): a render that is not a function is only described, never called.
  const render: unknown = Reflect.get(definition.output, 'render')
  if (typeof render !== 'function') fail(`output.render must be a function, (args, value) => a string or content parts, but got ${shown(render)}`)
}

/** The deadline and the grace after a cancel: each absent, or in the range a timer can keep. */
function checkTiming(definition: Readonly<AnyToolDefinition>, fail: (message: string) => never) {
  const { timeoutMs, cancelGraceMs } = definition
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    fail(`timeoutMs must be a positive, finite number of milliseconds, but got ${shown(timeoutMs)}`)
  }
  if (timeoutMs !== undefined && timeoutMs > MAX_TIMEOUT_MS) fail(`timeoutMs must be at most ${MAX_TIMEOUT_MS} ms (about 24.8 days)`)
  if (cancelGraceMs !== undefined && !(Number.isInteger(cancelGraceMs) && cancelGraceMs >= 0 && cancelGraceMs <= MAX_CANCEL_GRACE_MS)) {
    fail(`cancelGraceMs must be a whole number of milliseconds from 0 to ${MAX_CANCEL_GRACE_MS}, but got ${shown(cancelGraceMs)}`)
  }
}

/** The optional flags and functions: each absent, or of its type. */
function checkFlagsAndFunctions(definition: Readonly<AnyToolDefinition>, fail: (message: string) => never) {
  for (const key of ['replaySafe', 'recoverAfterInterrupt'] as const) {
    if (definition[key] !== undefined && typeof definition[key] !== 'boolean') fail(`${key} must be true or false, but got ${shown(definition[key])}`)
  }
  if (definition.recoverAfterInterrupt === true && definition.recover === undefined) fail('recoverAfterInterrupt needs a recover function: the call is left for it')
  const concurrent: unknown = definition.isConcurrencySafe
  if (concurrent !== undefined && typeof concurrent !== 'boolean' && typeof concurrent !== 'function') {
    fail(`isConcurrencySafe must be true, false or a function (args) => boolean, but got ${shown(concurrent)}`)
  }
  for (const key of ['presentCall', 'presentResult', 'summarize', 'recover', 'availableTo', 'variantFor'] as const) {
    if (definition[key] !== undefined && typeof definition[key] !== 'function') fail(`${key} must be a function, but got ${shown(definition[key])}`)
  }
  const presentationMeta: unknown = Reflect.get(definition.output, 'presentationMeta')
  if (presentationMeta !== undefined && typeof presentationMeta !== 'function') fail(`output.presentationMeta must be a function, but got ${shown(presentationMeta)}`)
}

/** Effects as declared, deduplicated, in the canonical order, frozen. */
function checkEffects(declared: unknown, fail: (message: string) => never): readonly ToolEffect[] {
  if (declared === undefined) return Object.freeze([])
  if (!Array.isArray(declared)) fail(`effects must be an array of ${TOOL_EFFECTS.join(', ')}, but got ${shown(declared)}`)
  const unknown = (declared as unknown[]).find((effect) => !isToolEffect(effect))
  if (unknown !== undefined) fail(`effects: unknown effect ${JSON.stringify(unknown)}; use ${TOOL_EFFECTS.join(', ')}`)
  return Object.freeze(TOOL_EFFECTS.filter((effect) => (declared as unknown[]).includes(effect)))
}

/** Frozen JSON (marked): a provider can cache the wire JSON of a list of them by the list. */
function modelSchema(name: string, description: string, parameters: JsonSchema): ToolSchema {
  // No depth limit of its own: `parameters` was held to it, and this only adds the level around it.
  return toFrozenJson<ToolSchema>({ name, description, parameters }, { maxDepth: Number.POSITIVE_INFINITY }) as ToolSchema
}

const VARIANT_KEYS: Record<keyof ToolVariant, true> = { description: true, parameters: true }

/** Each variant checked and compiled as the tool's own description and parameters are; none without `variantFor`. */
function compileVariants(definition: Readonly<AnyToolDefinition>, base: ToolSchema, fail: Fail): ReadonlyMap<string, ToolSchema> {
  const { variants, variantFor } = definition
  if (variants === undefined) {
    if (variantFor !== undefined) fail('variantFor names one of variants, but there are none; add variants: {<name>: {description?, parameters?}}')
    return new Map()
  }
  if (typeof variants !== 'object' || variants === null || Array.isArray(variants)) fail(`variants must be an object of variants by name, {<name>: {description?, parameters?}}, but got ${shown(variants)}`)
  if (variantFor === undefined) fail("variants are shown only to the runs variantFor names; add variantFor: (identity) => a variant's name or undefined")
  const compiled = new Map<string, ToolSchema>()
  for (const [name, variant] of Object.entries(variants)) {
    const field = `variants.${name}`
    if (typeof variant !== 'object' || variant === null || Array.isArray(variant)) fail(`${field} must be {description?, parameters?}, but got ${shown(variant)}`)
    refuseUnknownKeys(Object.keys(variant), VARIANT_KEYS, { field, takes: 'a variant takes' }, fail)
    const description: unknown = variant.description ?? base.description
    if (typeof description !== 'string' || description.trim() === '') fail(`${field}.description must be a non-empty string (the model reads it), but got ${shown(variant.description)}`)
    const parameters = variant.parameters === undefined ? base.parameters : compileSchema(() => compileParameters(variant.parameters), `${field}.parameters`, fail)
    compiled.set(name, modelSchema(definition.name, description as string, parameters))
  }
  return compiled
}

/** `field` names where the schema is written (`parameters`, `output.schema`, `variants.<name>.parameters`). */
function compileSchema(
  compile: () => JsonSchema,
  field: string,
  fail: (message: string, cause?: unknown, details?: Record<string, unknown>) => never,
): JsonSchema {
  try {
    const schema = compile()
    assertSupportedSchema(schema, field === 'output.schema' ? 'output' : 'parameters')
    return canonicalSchema(schema)
  } catch (error) {
    const details = (error instanceof ReinError ? error.details : undefined) ?? {}
    // cordis logs an error's cause before the error: a schema refusal, already all in our message,
    // would be printed once more without the tool's name. Anything else keeps its stack as the cause.
    const cause = isReinError(error, 'INVALID_SCHEMA') ? undefined : error
    return fail(`${field}: ${error instanceof Error ? error.message : String(error)}`, cause, { field, ...details })
  }
}

function compileParameters(parameters: unknown): JsonSchema {
  if (isRawSchema(parameters)) {
    const raw: unknown = parameters.schema
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw schemaError(`jsonSchema() needs a JSON Schema object, but got ${shown(raw)}`)
    if (parameters.schema.type !== 'object') {
      throw schemaError(`a parameters schema must have type "object" (arguments are always named), but has type ${shown(parameters.schema.type)}`)
    }
    return parameters.schema
  }
  if (parameters === undefined) throw schemaError("parameters is missing; give a map of property specs ({} for a tool that takes no arguments)")
  const misplaced = typeof parameters === 'object' && parameters !== null ? jsonSchemaAsProperties(parameters) : undefined
  if (misplaced) throw schemaError(misplaced)
  return { type: 'object', ...compileProperties(parameters), additionalProperties: false }
}

/** An `INVALID_SCHEMA` about the whole of a schema (path `$`). */
function schemaError(message: string): ReinError {
  return new ReinError('INVALID_SCHEMA', `$: ${message}`, { details: { path: '$' } })
}

function compileOutput(schema: unknown): JsonSchema {
  return isRawSchema(schema) ? schema.schema : compileValue(schema)
}
