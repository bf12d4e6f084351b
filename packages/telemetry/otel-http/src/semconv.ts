/**
 * Every span name, attribute key, metric name and bucket boundary this package writes, in one place:
 * the OpenTelemetry GenAI semantic conventions v1.41.0 (`gen_ai.*`, `server.*`, `error.type`) and
 * rein's own `rein.*` names. A later move to semantic-conventions-genai changes this file only.
 */

/** `gen_ai.operation.name` values, which also start the span names. */
export const OPERATION = {
  invokeAgent: 'invoke_agent',
  chat: 'chat',
  executeTool: 'execute_tool',
} as const

/** Span names: `invoke_agent <agent>`, `chat <model>`, `execute_tool <tool>`. */
export const spanName = {
  invokeAgent: (agent: string) => `${OPERATION.invokeAgent} ${agent}`,
  chat: (model: string) => `${OPERATION.chat} ${model}`,
  executeTool: (tool: string) => `${OPERATION.executeTool} ${tool}`,
}

/** Attribute keys from the GenAI conventions v1.41.0 and the general ones they use. */
export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  /** Prefix: `gen_ai.usage.input_tokens`, `.output_tokens`, `.cache_read.input_tokens`. */
  usage: 'gen_ai.usage',
  toolName: 'gen_ai.tool.name',
  /** `function` for every rein tool: the application runs it (the conventions' client-side tool). */
  toolType: 'gen_ai.tool.type',
  toolCallId: 'gen_ai.tool.call.id',
  conversationId: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  tokenType: 'gen_ai.token.type',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  errorType: 'error.type',
  // Content: written only with `captureContent: true`.
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
  toolDefinitions: 'gen_ai.tool.definitions',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
} as const

/** rein's own attributes: run totals live here so a backend summing `gen_ai.usage.*` counts every token once. */
export const REIN = {
  runId: 'rein.run.id',
  sessionId: 'rein.session.id',
  runEndReason: 'rein.run.end_reason',
  /** What a run was when it was not a turn: `compaction` (between turns: `rein compact`, `/compact`), `repair` (a repair no turn took). */
  runPurpose: 'rein.run.purpose',
  /** The code a run ended with (`MAX_STEPS`, `AUTH`, …), failure or not. */
  runEndCode: 'rein.run.end_code',
  llmRoute: 'rein.llm.route',
  llmRetry: 'rein.llm.retry',
  llmFallback: 'rein.llm.fallback',
  /** `true` on a `chat` span crash repair told: a request a kill cut off, recorded by the next process (see the README). */
  attemptRepaired: 'rein.attempt.repaired',
  /**
   * Prefixes: `<prefix>.input_tokens`, `.output_tokens`, `.cache_read.input_tokens`. `estimated` is
   * on a `chat` span whose provider reported no usage (rein's estimate); `total` and `children` on
   * `invoke_agent`.
   */
  usageEstimated: 'rein.usage.estimated',
  usageTotal: 'rein.usage.total',
  usageChildren: 'rein.usage.children',
  /** `true` on `invoke_agent` when some of `rein.usage.total.*` is rein's estimate. */
  usageTotalEstimated: 'rein.usage.total.estimated',
  costTotal: 'rein.cost.total',
  costChildren: 'rein.cost.children',
  costUnpriced: 'rein.cost.unpriced',
} as const

/** Metric names and units (v1.41.0). */
export const METRIC = {
  tokenUsage: { name: 'gen_ai.client.token.usage', unit: '{token}', description: 'Tokens used per model request, by gen_ai.token.type' },
  operationDuration: { name: 'gen_ai.client.operation.duration', unit: 's', description: 'Duration of model requests' },
} as const

/** `gen_ai.client.token.usage` buckets: powers of 4 from 1 to 4^13. */
export const TOKEN_BUCKETS: readonly number[] = Object.freeze([1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864])

/** `gen_ai.client.operation.duration` buckets, in seconds: 0.01 doubling to 81.92. */
export const DURATION_BUCKETS: readonly number[] = Object.freeze([0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92])

/** `gen_ai.tool.type` of a tool the application itself runs, as rein runs all of its tools. */
export const TOOL_TYPE_FUNCTION = 'function'

/** `error.type` when nothing more precise is known (the conventions' fallback value). */
export const ERROR_OTHER = '_OTHER'

/** The instrumentation scope spans and metrics are reported under. */
export const SCOPE_NAME = '@rein/otel-http'
