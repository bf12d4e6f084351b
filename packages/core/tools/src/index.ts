/**
 * @rein/tools: the `ctx.tools` service. Load it as a plugin (`name: '@rein/tools'`) and register
 * tools from your own plugins with `ctx.tools.register(defineTool({...}))`.
 */

import { ToolRegistry } from './registry.ts'

export default ToolRegistry
// Re-exported so a tool package can throw typed errors with @rein/tools as its only rein dependency.
export { ReinError, isReinError } from '@rein/base'
export { ToolRegistry, type ToolRegistryConfig } from './registry.ts'
export {
  defineTool, jsonSchema,
  type ToolDefinition, type AnyToolDefinition, type DefinedTool, type ToolOutput, type ToolRun, type ToolRunBase, type RawSchema, type ArgsOf, type ValueOf,
  type ToolVariant, type RecoverCall, type RecoverContext, type Recovered,
} from './define-tool.ts'
export { TOOL_EFFECTS, ASK_FOR_BY_DEFAULT, describeEffects, type ToolEffect } from './effects.ts'
export type { RunIdentity, SpillFile, OpenSpill, ToolRunFields, ToolCallContext } from './run-context.ts'
export type {
  ValueSpec, PropertySpec, PropertiesSpec, StringSpec, NumberSpec, BooleanSpec, NullSpec, ArraySpec, ObjectSpec,
  JsonSpec, OneOfSpec, InferValue, InferProperties,
} from './schema-dsl.ts'
export { validateJson, type JsonSchema, type SchemaIssue } from './json-schema.ts'
export type { ToolSchema } from './registration.ts'
export type { ExecuteInput } from './pipeline.ts'
export type {
  ToolResult, ToolSuccess, ToolFailure, ToolErrorCode, ToolContent, ToolContentPart, DurableToolResult,
} from './result.ts'
export type {
  ToolCall, ToolInfo, PreExecuteDecision, PreExecutePolicy, ToolGuard, DispatchOutcome, ExecuteWrapper,
  PostExecuteDecision, PostExecuteHook, ResultObserver, ToolRequestSummary, ApprovalRequest, ApprovalService,
} from './hooks.ts'
export type { ToolCallView, ToolResultView, ToolCallKind, FileChange } from './presentation.ts'
export { excerpt, leftOut, spillPreview, type SpillLimits, type SpillExcerpt, type SpillSaved } from './spill-preview.ts'
/** The same excerpt as `excerpt`, kept from a stream of text without holding all of it. */
export { SpillKeeper } from './spill-keeper.ts'
