/** `defineTool` and the definition shape every tool package writes. */

import type { FrozenJson, JsonObject, JsonValue, ReinError } from '@rein/base'
import type { Logger } from '@deepseek-ai/cordis'
import type { JsonSchema } from './json-schema.ts'
import type { InferProperties, InferValue, PropertiesSpec, ValueSpec } from './schema-dsl.ts'
import type { ToolCallView, ToolResultView } from './presentation.ts'
import type { DurableToolResult, ToolContent } from './result.ts'
import type { ToolEffect } from './effects.ts'
import type { OpenSpill, RunIdentity, ToolRunFields } from './run-context.ts'

const RAW_SCHEMA = Symbol.for('rein.tools.raw-schema')

/** A hand-written JSON Schema (checked against the supported subset at registration), typed as `T`. */
export interface RawSchema<T = unknown> {
  readonly [RAW_SCHEMA]: true
  readonly schema: JsonSchema
  /** Type carrier only; never set. */
  readonly __type?: T
}

/** Wraps a JSON Schema for `parameters` or `output.schema`; `T` is the type you promise it describes. */
export function jsonSchema<T = JsonValue>(schema: JsonSchema): RawSchema<T> {
  return { [RAW_SCHEMA]: true, schema }
}

export function isRawSchema(value: unknown): value is RawSchema {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[RAW_SCHEMA] === true
}

/** What the body receives besides its arguments: frozen, the same object for the whole call. */
export interface ToolRunBase {
  readonly callId: string
  /** Aborted when the caller cancels or the deadline (`timeoutMs`, else the registry's `defaultTimeoutMs`) passes. */
  readonly signal: AbortSignal
  readonly sessionId?: string
  /** Directory relative paths resolve against. */
  readonly cwd: string
  /** The folder the tool may work in (tool-fs keeps every path inside it). Often, not always, `cwd`. */
  readonly workspaceRoot: string
  readonly logger: Logger
  /** Who the call runs for; absent when something other than an agent calls the registry. */
  readonly identity?: RunIdentity
  /** Opens a file in the session's folder for output too big to hold; absent outside a session. */
  readonly spill?: OpenSpill
  /**
   * The folder spilled output goes to (the agent's previews name files in it). A read tool may let
   * the model read files here, never write them; absent outside a session.
   */
  readonly spillFolder?: string
}

/** `ToolRunBase` plus the fields loaded provider packages contribute (see `ToolRunFields`). */
export type ToolRun = ToolRunBase & { readonly [K in keyof ToolRunFields]?: ToolRunFields[K] }

/** A call left without a result by a crash, as `recover` sees it. */
export interface RecoverCall<A> {
  readonly callId: string
  readonly args: FrozenJson<A>
}

/** What `recover` found: the call's value, or the error it ended with (a `ReinError`: its code and message). */
export type Recovered<V> = { value: V } | { error: ReinError }

/** What `recover` gets besides the call. */
export interface RecoverContext {
  readonly sessionId?: string
  readonly cwd: string
  readonly workspaceRoot: string
  readonly signal: AbortSignal
  readonly logger: Logger
}

/** The arguments a tool receives, inferred from its `parameters` (a spec or a raw JSON Schema). */
export type ArgsOf<P> = P extends RawSchema<infer A> ? A : InferProperties<P>
/** The value a tool returns, inferred from its `output.schema`. */
export type ValueOf<O> = O extends RawSchema<infer V> ? V : InferValue<O>

/** What a tool returns and how the model reads it: the value's schema and its rendering. */
export interface ToolOutput<A, V> {
  /** Every successful value is validated against this before it is rendered. */
  schema: ValueSpec | RawSchema<V>
  /** Turns the value into what the model reads. Pure. */
  render(args: FrozenJson<A>, value: FrozenJson<V>): string | ToolContent
  /** JSON kept in the log beside the content, for presenters on replay. */
  presentationMeta?(args: FrozenJson<A>, value: FrozenJson<V>): JsonValue | undefined
}

/** A tool as `register` takes it: its name, what the model reads of it, its body and what it declares. */
export interface ToolDefinition<A = unknown, V = unknown> {
  /** 1–64 of `[A-Za-z0-9_-]`, unique in the registry. */
  name: string
  /** Shown to the model; say what the tool does and when to use it. */
  description: string
  /** A properties map in the DSL (the root object is closed), or `jsonSchema(...)` with `type: 'object'`. */
  parameters: PropertiesSpec | RawSchema<A>
  output: ToolOutput<A, V>
  /** Runs the tool with the arguments validated before any hook ran. Throw for failure; return a value for any outcome the tool considers normal. */
  execute(args: FrozenJson<A>, run: ToolRun): V | Promise<V>
  /** Only an exact `true` (or a function returning exactly `true`) lets calls run beside others. */
  isConcurrencySafe?: boolean | ((args: FrozenJson<A>) => boolean)
  /** What the tool may do. None (or absent) = pure. `write` and `exec` ask for approval by default. */
  effects?: readonly ToolEffect[]
  /** Safe to run again when a crash left its outcome unknown. Default: true only for declared read-only or pure tools. */
  replaySafe?: boolean
  /**
   * On resume, before a call that a crash left without a result gets a synthesized error: return
   * `{value}` when the real outcome can be found (it is validated and rendered like a result),
   * `{error}` when it is known to have failed (or never started), or nothing to decline.
   */
  recover?(call: RecoverCall<A>, context: RecoverContext): Recovered<V> | undefined | Promise<Recovered<V> | undefined>
  /**
   * When rein shuts down under a call (an interrupt, not a cancel) and the body ends with an error,
   * leave the call without a result, as a crash would, so that the next resume asks `recover`: for
   * a tool whose `recover` can continue the work (a subagent). Default false: the error is the result.
   */
  recoverAfterInterrupt?: boolean
  /** Deadline for the body in ms (at most 2^31 - 1); past it the call ends with `TOOL_TIMEOUT`. Default: the registry's `defaultTimeoutMs`. */
  timeoutMs?: number
  /**
   * After the caller cancels, how long (ms, at most 10000) the body may take to end with its own
   * error — one that carries what it had done (a subagent's partial answer). Default 0: the call
   * ends `ABORTED` at once.
   */
  cancelGraceMs?: number
  /** Pure: a card for the pending call. */
  presentCall?(args: FrozenJson<A>): ToolCallView | undefined
  /** Pure: a card for the finished call, from what the log keeps. */
  presentResult?(args: FrozenJson<A>, result: DurableToolResult): ToolResultView | undefined
  /** One line for history compression. */
  summarize?(args: FrozenJson<A>, result: DurableToolResult): string
  /**
   * Pure: whether an agent's run may see and call the tool (a subagent may be kept from it). Asked
   * only for calls and schema lists that carry a run identity; absent = every run. Throwing = not available.
   */
  availableTo?(identity: RunIdentity): boolean
  /**
   * Narrower forms of the tool, by name, for runs that may do less (a memory tool offering only the
   * scopes an agent may write): the model reads a variant's description and parameters in place of
   * the tool's own. Calls are still checked against `parameters`, so a variant should only narrow
   * them, and the body still refuses what a run may not do.
   */
  variants?: Readonly<Record<string, ToolVariant>>
  /** Pure: which of `variants` a run is shown. Undefined, a name not in `variants`, or a throw: the tool as defined. */
  variantFor?(identity: RunIdentity): string | undefined
}

/** What a run shown a variant reads in place of the tool's own (see `variants`): its description, its parameters, or both. */
export interface ToolVariant {
  description?: string
  parameters?: PropertiesSpec | RawSchema
}

/**
 * Any tool `defineTool` made, whatever its argument and value types, as `register` takes it (a list
 * of different tools registers in one loop). Each position a body's types enter is `never` and each
 * it leaves by is `unknown`, so every `ToolDefinition<A, V>` fits and none is widened to `any`: the
 * types were checked where the tool was defined, and the registry checks the rest at run time.
 * `register` takes it only as a value already typed so, not as an object literal (see `Defined`).
 */
export interface DefinedTool extends Omit<ToolDefinition<never, never>, 'parameters' | 'output' | 'execute' | 'recover'> {
  parameters: PropertiesSpec | RawSchema<unknown>
  output: {
    schema: ValueSpec | RawSchema<unknown>
    render(args: never, value: never): string | ToolContent
    presentationMeta?(args: never, value: never): JsonValue | undefined
  }
  execute(args: never, run: ToolRun): unknown
  recover?(call: RecoverCall<never>, context: RecoverContext): Recovered<unknown> | undefined | Promise<Recovered<unknown> | undefined>
}

/** A definition with its types erased, as the registry holds it: arguments are a JSON object, the value JSON. */
export type AnyToolDefinition = ToolDefinition<JsonObject, JsonValue>

/** A definition as written, before its types are known: `parameters` and `output.schema` give them to the rest. */
export type ToolSource<P extends PropertiesSpec | RawSchema, O extends ValueSpec | RawSchema> =
  Omit<ToolDefinition<ArgsOf<P>, ValueOf<O>>, 'parameters' | 'output'> & {
    parameters: P
    output: { schema: O } & Omit<ToolOutput<ArgsOf<P>, ValueOf<O>>, 'schema'>
  }

/**
 * `T` when it is typed as a whole definition (what `defineTool` returns, any `ToolDefinition<A, V>`,
 * a `DefinedTool`), else a type nothing fits, named for the author who reads it in an error. Such a
 * type's `output.schema` is every spec there is, while an object literal's is the one spec it wrote,
 * so a literal that was not accepted as a `ToolSource` (its execute, render and schemas disagree) is
 * not accepted as an already checked tool either.
 */
export type Defined<T extends DefinedTool> = ValueSpec extends T['output']['schema'] ? T : NotAToolSource

/** What a definition written in place that does not type-check meets in `register`'s second signature. */
interface NotAToolSource extends DefinedTool {
  'a definition written in place must type-check as defineTool checks it: see the error of the first signature': never
}

/**
 * Declares a tool. Argument and value types are inferred from `parameters` and `output.schema`,
 * so `execute` is checked against both; the schemas themselves are checked at registration.
 */
export function defineTool<const P extends PropertiesSpec | RawSchema, const O extends ValueSpec | RawSchema>(
  definition: ToolSource<P, O>,
): ToolDefinition<ArgsOf<P>, ValueOf<O>> {
  return definition as ToolDefinition<ArgsOf<P>, ValueOf<O>>
}
