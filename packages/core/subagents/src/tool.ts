/** The `subagent` tool: the model's way to hand a self-contained task to a child agent. */

import type { SessionService } from '@rein/session'
import { defineTool, type ToolRegistry } from '@rein/tools'
import { childTools, readOnly } from './child-tools.ts'
import type { SubagentsConfig } from './config.ts'
import { recoverChild } from './recover.ts'
import type { SubagentRequest, SubagentResult } from './types.ts'

/** What the tool needs from the service. */
export interface ToolDeps {
  config: SubagentsConfig
  tools: () => ToolRegistry
  sessions: () => SessionService | undefined
  run(request: SubagentRequest): Promise<SubagentResult>
}

export function createSubagentTool(deps: ToolDeps) {
  const { config } = deps
  return defineTool({
    name: 'subagent',
    description: describe(config),
    parameters: {
      description: { type: 'string', required: true, maxLength: 120, description: 'A few words saying what the subagent does, shown to the user.' },
      prompt: { type: 'string', required: true, description: 'The whole task: the subagent sees nothing else of this conversation.' },
      agent: { type: 'string', description: 'A kind of subagent listed above, if any. Default: a general one with your tools.' },
      tools: { type: 'array', items: { type: 'string' }, description: 'Only these of your tools, by name or glob (e.g. ["read", "grep"]).' },
    },
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          sessionId: { type: 'string', required: true },
          answer: { type: 'string', required: true },
          reason: { type: 'string', required: true },
          usage: {
            type: 'object',
            additionalProperties: false,
            properties: {
              inputTokens: { type: 'integer', required: true },
              outputTokens: { type: 'integer', required: true },
              cacheReadTokens: { type: 'integer' },
              cacheWriteTokens: { type: 'integer' },
              reasoningTokens: { type: 'integer' },
            },
          },
          cost: { type: 'number' },
        },
      },
      render: (_args, value) => `${value.answer === '' ? '(the subagent gave no answer)' : value.answer}\n(subagent session ${value.sessionId})`,
    },
    execute: (args, run) => deps.run({
      prompt: args.prompt,
      ...(args.agent === undefined ? {} : { agent: args.agent }),
      ...(args.tools === undefined ? {} : { tools: args.tools }),
      call: run,
    }),
    // The child's own tools ask for approval as they run; delegating alone changes nothing.
    effects: [],
    // A read-only child (no tool that writes or runs commands) can run beside other calls.
    isConcurrencySafe: (args) => {
      if (args.agent !== undefined && !Object.hasOwn(config.profiles, args.agent)) return false
      const registry = deps.tools()
      const names = childTools(registry, [args.agent === undefined ? undefined : config.profiles[args.agent]?.tools, args.tools]) ?? registry.list()
      return readOnly(registry, names)
    },
    // Running a child again repeats its work and its cost: `recover` reads a finished one instead.
    replaySafe: false,
    recover: async (call, context) => {
      const found = await recoverChild(deps.sessions(), call.callId, context.sessionId)
      return found === undefined ? undefined : { value: found }
    },
    availableTo: (identity) => identity.depth < config.maxDepth,
    // A child may work for long; its own steps and tools have their deadlines.
    timeoutMs: 2 ** 31 - 1,
    presentCall: (args) => ({ card: 'generic', kind: 'other', title: args.agent === undefined ? 'Subagent' : `Subagent (${args.agent})`, detail: args.description }),
  })
}

/** The description the model reads, with one line per profile. */
function describe(config: SubagentsConfig): string {
  const profiles = Object.entries(config.profiles)
  const base = 'Hands a self-contained task to a subagent: a new agent that works on prompt alone, with your tools (or fewer), and returns its final answer. Use it for work whose details need not stay in your context: research, a search across many files, a focused change. Put everything it needs in prompt. Several subagents whose tools only read run in parallel.'
  if (profiles.length === 0) return base
  return `${base}\nagent picks a kind of subagent:\n${profiles.map(([name, profile]) => `- ${name}${profile.description ? `: ${profile.description}` : ''}`).join('\n')}`
}
