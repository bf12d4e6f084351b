// `rein show` names a call that never started (no intent in the log) before its result, as it names one that ran.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, rein } from './harness.ts'

const setUp = projectPerTest(afterEach)
const route = { provider: 'mock', model: 'mock-model' }

function writeSession(root: string, id: string, code: string) {
  mkdirSync(root, { recursive: true, mode: 0o700 })
  const header = { kind: 'rein-session', formatVersion: 1, id, createdAt: '2026-01-01T00:00:00.000Z', cwd: root, depth: 0 }
  const calls = [
    { type: 'tool-call', id: 'c1', name: 'bash', arguments: '{"command":"echo ran","description":"d"}' },
    { type: 'tool-call', id: 'c2', name: 'bash', arguments: '{"command":"echo never","description":"d"}' },
  ]
  const data = [
    ['turn/start', { turn: 1 }],
    ['user/message', { message: { id: 'm1', role: 'user', content: [{ type: 'text', text: 'go' }], source: { kind: 'user' } } }],
    ['step/start', { turn: 1, step: 1 }],
    ['assistant/message', { message: { id: 'm2', role: 'assistant', content: calls, source: { kind: 'model' } }, usage: { inputTokens: 1, outputTokens: 1 }, ...route }],
    ['tool/call', { callId: 'c1', name: 'bash', arguments: calls[0]!.arguments, replaySafe: false }],
    ['tool/result', { callId: 'c1', content: [{ type: 'text', text: 'ran' }], isError: false }],
    ['tool/result', { callId: 'c2', content: [{ type: 'text', text: 'Error: bash was not run' }], isError: true, code }],
    ['step/end', { turn: 1, step: 1 }],
    ['turn/end', { turn: 1, reason: 'budget', error: { code: 'MAX_OUTPUT_TOKENS', message: 'over' } }],
  ] as const
  const events = data.map(([type, payload], seq) => ({ seq, type, time: '2026-01-01T00:00:00.000Z', data: payload }))
  writeFileSync(join(root, `${id}.jsonl`), `${[header, ...events].map((line) => JSON.stringify(line)).join('\n')}\n`, { mode: 0o600 })
}

describe('rein show, a call paired without running', () => {
  for (const code of ['BUDGET_EXCEEDED', 'TOOL_NOT_STARTED', 'ABORTED_BEFORE_DISPATCH']) {
    it(`names the call before its ${code} result, as the model asked for it`, async () => {
      const p = await setUp([])
      const id = '11111111-2222-3333-4444-555555555555'
      writeSession(join(p.home, 'sessions'), id, code)
      const shown = await rein(p.dir, ['show', id])
      expect(shown.code).toBe(0)
      expect(shown.stdout).toContain('\n  → bash {"command":"echo ran","description":"d"}\n  ← ran\n')
      expect(shown.stdout).toContain(`\n  → bash {"command":"echo never","description":"d"}\n  ← error ${code}: bash was not run\n`)
    })
  }
})
