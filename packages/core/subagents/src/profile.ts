/** Named agent profiles: looking one up by the call's `agent`, the child's options it gives, and the load-time check. */

import type { CreateAgentOptions } from '@rein/agent'
import { ReinError } from '@rein/base'
import type { LlmRuntime } from '@rein/llm'
import type { ToolRegistry } from '@rein/tools'
import { unknownNames } from './child-tools.ts'
import type { SubagentProfile, SubagentsConfig } from './config.ts'

/** The profile `name` picks; undefined without a name; `INVALID_ARGS` listing the profiles for an unknown one. */
export function profileOf(config: SubagentsConfig, name: string | undefined): SubagentProfile | undefined {
  if (name === undefined) return undefined
  const profile = Object.hasOwn(config.profiles, name) ? config.profiles[name] : undefined
  if (!profile) {
    const names = Object.keys(config.profiles)
    throw new ReinError('INVALID_ARGS', `unknown agent "${name}"; ${names.length > 0 ? `the agents are: ${names.join(', ')}` : 'no agent profiles are configured: leave agent out'}`, { details: { agent: name, profiles: names } })
  }
  return profile
}

/** What a profile (or none) sets on a child, created or resumed: its name, prompt, steps, memory and tool names. */
export function childOptions(name: string | undefined, profile: SubagentProfile | undefined, tools: readonly string[] | undefined): CreateAgentOptions {
  return {
    name: name ?? 'subagent',
    ...(profile?.system === undefined ? {} : { system: profile.system }),
    ...(profile?.maxSteps === undefined ? {} : { maxSteps: profile.maxSteps }),
    ...(profile?.memory === undefined ? {} : { memory: profile.memory }),
    ...(tools === undefined ? {} : { tools: [...tools] }),
  }
}

export function profileError(name: string, problem: string, cause?: unknown): ReinError {
  return new ReinError('SUBAGENT_PROFILE_INVALID', `the subagent profile "${name}" cannot be used: ${problem}`, { details: { agent: name }, ...(cause === undefined ? {} : { cause }) })
}

/**
 * What is wrong with each profile once every row has loaded: a tool name no registered tool has, a
 * provider no loaded adapter serves, a model its provider's catalog does not list. One line per
 * problem, naming the profile.
 */
export async function profileProblems(config: SubagentsConfig, tools: ToolRegistry, llm: LlmRuntime | undefined): Promise<string[]> {
  const problems: string[] = []
  for (const [name, profile] of Object.entries(config.profiles)) {
    const unknown = profile.tools ? unknownNames(tools, profile.tools) : []
    if (unknown.length > 0) problems.push(`profiles.${name}.tools names no such tool: ${unknown.join(', ')} (registered: ${tools.list().join(', ') || 'none'})`)
    if (!llm || (profile.provider === undefined && profile.model === undefined)) continue
    if (profile.provider !== undefined && !llm.providers().includes(profile.provider)) {
      problems.push(`profiles.${name}.provider "${profile.provider}" is served by no loaded provider (loaded: ${llm.providers().join(', ') || 'none'})`)
      continue
    }
    if (profile.provider === undefined || profile.model === undefined) continue
    const problem = await unknownModel(llm, profile.provider, profile.model)
    if (problem) problems.push(`profiles.${name}.model ${problem}`)
  }
  return problems
}

/** A model the provider's catalog does not list; a provider without a catalog takes any name. */
async function unknownModel(llm: LlmRuntime, provider: string, model: string): Promise<string | undefined> {
  if (await llm.modelInfo(provider, model)) return undefined
  const listed = llm.listModels(provider)
  if (listed.length === 0) return undefined
  return `"${model}" is not in ${provider}'s model catalog (it has: ${listed.map((info) => info.id).join(', ')})`
}
