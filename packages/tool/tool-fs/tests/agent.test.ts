// tool-fs inside a whole agent: a scripted model reads, edits and follows a spill hint, and the
// requests it gets show exactly what a real model would read.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import AgentService from '@rein/agent'
import LlmRuntime, { type AdapterRequest } from '@rein/llm'
import SessionService, { MemorySessionStore } from '@rein/session'
import { createScriptedLlm, validateSessionInvariants, type ScriptedLlmScript } from '@rein/testkit'
import ToolRegistry, { defineTool } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import * as toolFs from '../src/index.ts'
import { useFolders, write } from './harness.ts'

const folders = useFolders()

async function bootAgent(script: ScriptedLlmScript, agent: Record<string, unknown> = {}) {
  const root = new Context()
  await root.plugin(LlmRuntime)
  await root.plugin(ToolRegistry, { askFor: [] })
  await root.plugin(SessionService)
  await root.inject(['sessions'], (ctx) => { ctx.sessions.registerStore(new MemorySessionStore()) })
  await root.plugin(AgentService, { provider: 'scripted', model: 'm', ...agent })
  await root.plugin(toolFs, {})
  const llm = createScriptedLlm(script)
  root.llm.registerAdapter('scripted', llm)
  return { root, llm }
}

const call = (name: string, args: object) => ({ toolCall: { name, arguments: JSON.stringify(args) } })

/** The text of the last tool result in a request, as the model reads it. */
function lastToolText(request: AdapterRequest | undefined): string {
  const part = request?.messages.at(-1)?.content[0]
  if (part?.type !== 'tool-result') return ''
  return part.content.map((piece) => (piece.type === 'text' ? piece.text : '')).join('\n')
}

describe('inside an agent', () => {
  it('reads a file, is refused an unread edit, reads, edits, and the model sees each answer', async () => {
    const { workspace } = folders()
    write(join(workspace, 'notes.md'), '# Notes\n\nTeh quick fox.\n')
    write(join(workspace, 'todo.md'), '- one\n')
    const { root, llm } = await bootAgent([
      [call('edit', { path: 'todo.md', old_string: 'one', new_string: 'two' })],
      [call('read', { path: 'notes.md' })],
      [call('edit', { path: 'notes.md', old_string: 'Teh', new_string: 'The' })],
      [{ text: 'Fixed the typo.' }],
    ])
    const agent = await root.agents.create({ cwd: workspace })
    await agent.send('fix the typo in notes.md')
    expect(lastToolText(llm.requests[1])).toBe('Error: todo.md already exists and has not been read in this session since rein started (reads from before a restart or resume are not remembered); read it now (any part), then try again')
    expect(lastToolText(llm.requests[2])).toBe('1\t# Notes\n2\t\n3\tTeh quick fox.')
    expect(lastToolText(llm.requests[3])).toBe('Edited notes.md (1 replacement). The changed part now reads:\n1\t# Notes\n2\t\n3\tThe quick fox.')
    expect(readFileSync(join(workspace, 'notes.md'), 'utf8')).toBe('# Notes\n\nThe quick fox.\n')
    expect(readFileSync(join(workspace, 'todo.md'), 'utf8')).toBe('- one\n')
    expect(validateSessionInvariants(agent.session.events)).toEqual([])
    const names = llm.requests[0]?.tools?.map((tool) => tool.name)
    expect(names).toEqual(['edit', 'glob', 'grep', 'multi_edit', 'read', 'write'])
  })

  it('lets the model read the file a spilled result was saved to, by the path the preview names', async () => {
    const { workspace } = folders()
    const saved: { path?: string } = {}
    const { root, llm } = await bootAgent((request, index) => {
      if (index === 0) return [call('dump', {})]
      if (index === 1) {
        saved.path = /saved at (\S+?);/.exec(lastToolText(request))?.[1]
        return [call('read', { path: saved.path, offset: 1500, limit: 2 })]
      }
      return [{ text: 'done' }]
    }, { spillAfterChars: 2000 })
    root.tools.register(defineTool({
      name: 'dump', description: 'Prints a lot.', parameters: {},
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: () => Array.from({ length: 3000 }, (_, i) => `row ${i + 1}`).join('\n'),
    }))
    const agent = await root.agents.create({ cwd: workspace })
    await agent.send('dump and look at row 1500')
    expect(saved.path).toMatch(/spill\/.+\.result\.txt$/)
    expect(lastToolText(llm.requests[2])).toBe('1500\trow 1500\n1501\trow 1501\n[Lines 1500-1501 of 3000. To read on, call read with offset 1502.]')
  })
})
