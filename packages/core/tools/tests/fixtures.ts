import { Context } from '@deepseek-ai/cordis'
import { ToolRegistry, defineTool, type ExecuteInput, type ToolRegistryConfig } from '../src/index.ts'

/** A root context with the registry loaded and a plugin fiber to register from. */
export async function createRegistry(config: Partial<ToolRegistryConfig> = {}) {
  const root = new Context()
  await root.plugin(ToolRegistry, config)
  let owner!: Context
  const fiber = await root.plugin({ name: 'test-owner', inject: ['tools'], apply: (ctx: Context) => { owner = ctx } })
  return { root, ctx: owner, tools: owner.tools, fiber }
}

export function call(name: string, args: unknown, extra: Partial<ExecuteInput> = {}): ExecuteInput {
  return {
    callId: 'call-1',
    name,
    arguments: typeof args === 'string' ? args : JSON.stringify(args),
    signal: new AbortController().signal,
    ...extra,
  }
}

export const echo = defineTool({
  name: 'echo',
  description: 'Repeats the text back.',
  parameters: {
    text: { type: 'string', required: true, description: 'what to repeat' },
    times: { type: 'integer', minimum: 1, maximum: 3 },
  },
  output: {
    schema: { type: 'object', additionalProperties: false, properties: { text: { type: 'string', required: true } } },
    render: (_args, value) => value.text,
    presentationMeta: (args) => ({ times: args.times ?? 1 }),
  },
  execute: (args) => ({ text: args.text.repeat(args.times ?? 1) }),
  isConcurrencySafe: true,
  replaySafe: true,
})
