// The Renderer's last line of a turn, fed results directly.
import { PassThrough } from 'node:stream'
import type { TurnResult } from '@rein/agent'
import { describe, expect, it } from 'vitest'
import { Renderer } from '../src/render.ts'

function renderer() {
  const stderr = new PassThrough()
  let text = ''
  stderr.on('data', (chunk: Buffer) => { text += chunk.toString() })
  return { renderer: new Renderer({ stdout: new PassThrough(), stderr, env: {} }, false, false), shown: () => text }
}

describe('the totals line', () => {
  it('prices a resumed turn that made no request of its own by what its continued subagents cost, not as unknown', () => {
    const { renderer: out, shown } = renderer()
    const result: TurnResult = {
      turn: 2, runId: 'run_1', reason: 'completed', usage: { inputTokens: 0, outputTokens: 0 }, text: '',
      subagents: { usage: { inputTokens: 300, outputTokens: 7 }, cost: 3.14 },
    }
    out.result(result)
    expect(shown()).not.toContain('cost unknown')
    expect(shown()).toContain('cost 3.1400')
  })
})
