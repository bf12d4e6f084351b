import { describe, expect, it } from 'vitest'
import * as approvalRow from '../src/approval-plugin.ts'
import { defineTool, type ToolEffect } from '../src/index.ts'
import { call, createRegistry } from './fixtures.ts'

function tool(name: string, effects: ToolEffect[]) {
  return defineTool({ name, description: `${name}.`, parameters: {}, effects, output: { schema: { type: 'string' }, render: (_a, v) => v }, execute: () => `${name} ran` })
}

describe('the approval row (@rein/tools/approval)', () => {
  it('allows the listed effects and tools, denies the rest, and leaves with its row', async () => {
    const { root, tools } = await createRegistry()
    tools.register(tool('edit', ['write']))
    tools.register(tool('shell', ['exec']))
    tools.register(tool('deploy', ['exec', 'network']))
    const row = await root.plugin(approvalRow, { allow: ['write'], tools: ['deploy'] })
    const outcome = async (name: string) => {
      const result = await tools.execute(call(name, {}))
      return result.isError ? result.error.code : 'ran'
    }
    expect([await outcome('edit'), await outcome('shell'), await outcome('deploy')]).toEqual(['ran', 'DENIED', 'ran'])
    await row.dispose()
    expect(root.get('approval')).toBeUndefined()
    expect(await outcome('edit')).toBe('DENIED')
  })

  it('does not allow by effect a call a pre-execute policy asked about; naming the tool does', async () => {
    const { root, tools } = await createRegistry()
    tools.register(tool('edit', ['write']))
    tools.register(tool('remember', ['write']))
    tools.preExecute((c) => (c.toolName === 'edit' || c.toolName === 'remember' ? { kind: 'ask', reason: 'every project reads it' } : undefined))
    await root.plugin(approvalRow, { allow: ['write'], tools: ['remember'] })
    const edit = await tools.execute(call('edit', {}))
    expect(edit.isError && edit.error).toEqual({ code: 'DENIED', message: 'edit was not approved (it changes files; every project reads it)' })
    expect((await tools.execute(call('remember', {}))).isError).toBe(false)
  })
})
