import { Context } from '@deepseek-ai/cordis'
import LlmRuntime from '@rein/llm'
import SessionService, { MemorySessionStore } from '@rein/session'
import { createScriptedLlm } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import AgentService from '../src/index.ts'

describe('approval for the agent\'s tool calls', () => {
  it('is asked of the approval service the agent\'s own scope sees, even one isolated to it', async () => {
    const root = new Context()
    await root.plugin(LlmRuntime, {})
    await root.plugin(ToolRegistry, {})
    await root.plugin(SessionService)
    await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(new MemorySessionStore()) })
    root.llm.registerAdapter('scripted', createScriptedLlm([[{ toolCall: { id: 'c1', name: 'edit', arguments: '{}' } }], [{ text: 'done' }]]))
    let edits = 0
    root.tools.register(defineTool({
      name: 'edit', description: 'Edits.', parameters: {}, effects: ['write'],
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: () => { edits++; return 'edited' },
    }))
    // Only the agents row's scope has an approval service; the tools row's sees none.
    const scope = root.isolate('approval')
    scope.provide('approval', { request: () => 'allow' as const })
    await scope.plugin(AgentService, { provider: 'scripted', model: 'm' })
    const agent = await scope.agents.create()
    const result = await agent.send('edit it')
    expect(result.reason).toBe('completed')
    expect(edits).toBe(1)
    await root.fiber.dispose()
  })
})
