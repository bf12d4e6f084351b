/** The `subagent` tool: the model's way to hand a self-contained task to a child agent. */

import { formatMoney, MAX_TIMER_MS, ReinError } from '@rein/base'
import { defineTool } from '@rein/tools'
import { childTools, readOnly } from './child-tools.ts'
import type { SubagentsConfig } from './config.ts'
import { recoverChild, type RecoverDeps } from './recover.ts'
import type { BackgroundStarted, SubagentRequest, SubagentResult } from './types.ts'

/** What the tool needs from the service. */
export interface ToolDeps extends RecoverDeps {
  run(request: SubagentRequest): Promise<SubagentResult>
  /** Starts the child as a job (`SUBAGENT_NO_JOBS` without `ctx.jobs`). */
  background(request: SubagentRequest): Promise<BackgroundStarted>
}

/** The tool's name, as calls in a log name it. */
export const SUBAGENT_TOOL = 'subagent'

export function createSubagentTool(deps: ToolDeps) {
  const { config } = deps
  return defineTool({
    name: SUBAGENT_TOOL,
    description: describe(config),
    parameters: {
      description: { type: 'string', required: true, maxLength: 120, description: 'A few words saying what the subagent does, shown to the user.' },
      prompt: { type: 'string', required: true, description: 'The whole task: the subagent sees nothing else of this conversation.' },
      agent: { type: 'string', description: 'A kind of subagent listed above, if any. Default: a general one with your tools.' },
      tools: { type: 'array', items: { type: 'string' }, description: 'Only these of your tools, by name or glob (e.g. ["read", "grep"]); [] for none.' },
      resume: { type: 'string', maxLength: 200, description: 'The session id of one of your earlier subagents (from its result or error): it continues with prompt as its next message, keeping all it did. For one that was cancelled, interrupted or failed, or for a follow-up question. Pass the same agent as before.' },
      run_in_background: { type: 'boolean', description: `For long work you need not wait for: returns a job id at once, and the answer arrives later as a message. At most ${config.maxBackground} run at once, counting every agent of this conversation. Needs background jobs (job_output, job_kill).` },
    },
    output: {
      schema: { oneOf: [{
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
      }, {
        // run_in_background: the child runs as a job.
        type: 'object',
        additionalProperties: false,
        properties: {
          kind: { type: 'string', const: 'background', required: true },
          sessionId: { type: 'string', required: true },
          jobId: { type: 'string', required: true },
        },
      }] },
      render: (_args, value) => 'jobId' in value
        ? `Started subagent ${value.sessionId} as job ${value.jobId}; its answer will arrive as a message. job_output ${value.jobId} shows its progress, job_kill stops it.`
        : `${value.answer === '' ? '(the subagent gave no answer)' : value.answer}\n(subagent session ${value.sessionId}${value.cost === undefined ? '' : `, cost ${formatMoney(value.cost)}`})`,
    },
    execute: (args, run) => {
      // A child on an empty message would spend a turn on nothing.
      if (args.prompt.trim() === '') throw new ReinError('INVALID_ARGS', 'prompt is empty: put the whole task in it, as the subagent sees nothing else of this conversation')
      const request: SubagentRequest = {
        prompt: args.prompt,
        description: args.description,
        ...(args.agent === undefined ? {} : { agent: args.agent }),
        ...(args.tools === undefined ? {} : { tools: args.tools }),
        ...(args.resume === undefined ? {} : { resume: args.resume }),
        call: run,
      }
      return args.run_in_background === true ? deps.background(request) : deps.run(request)
    },
    // The child's own tools ask for approval as they run; delegating alone changes nothing.
    effects: [],
    // A read-only child (no tool that writes or runs commands) can run beside other calls.
    isConcurrencySafe: (args) => {
      // A background call only starts the child and returns.
      if (args.run_in_background === true) return true
      if (args.agent !== undefined && !Object.hasOwn(config.profiles, args.agent)) return false
      const registry = deps.tools()
      const names = childTools(registry, [args.agent === undefined ? undefined : config.profiles[args.agent]?.tools, args.tools]) ?? registry.list()
      return readOnly(registry, names)
    },
    // Running a child again repeats its work and its cost: `recover` reads a finished one instead.
    replaySafe: false,
    recover: (call, context) => recoverChild(deps, call, context),
    // Shut down under the call, the child is interrupted too: the next resume continues it (`recover`).
    recoverAfterInterrupt: true,
    availableTo: (identity) => identity.depth < config.maxDepth,
    // A child may work for long; its own steps and tools have their deadlines.
    timeoutMs: MAX_TIMER_MS,
    // A cancelled child ends its turn and closes in well under this: the call's error then carries
    // the child's partial answer and session id instead of a bare ABORTED.
    cancelGraceMs: 5_000,
    presentCall: (args) => ({ card: 'generic', kind: 'other', title: args.agent === undefined ? 'Subagent' : `Subagent (${args.agent})`, detail: args.description }),
  })
}


/** The description the model reads, with one line per profile. */
function describe(config: SubagentsConfig): string {
  const profiles = Object.entries(config.profiles)
  const base = 'Hands a self-contained task to a subagent: a new agent that works on prompt alone, with your tools (or fewer), and returns its final answer. Use it for work whose details need not stay in your context: research, a search across many files, a focused change. Put everything it needs in prompt. Several subagents whose tools only read run in parallel. With run_in_background it works while you go on, for independent long work; its answer arrives later as a message.'
  if (profiles.length === 0) return base
  return `${base}\nagent picks a kind of subagent:\n${profiles.map(([name, profile]) => `- ${name}${profile.description ? `: ${profile.description}` : ''}`).join('\n')}`
}
