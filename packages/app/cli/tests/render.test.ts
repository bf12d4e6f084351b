// The Renderer's last line of a turn, fed results directly.
import { PassThrough } from 'node:stream'
import type { TurnResult } from '@rein/agent'
import { describe, expect, it } from 'vitest'
import { compactOutcome, Renderer } from '../src/render.ts'

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

/** A Renderer in JSON mode, and the JSON lines it wrote so far. */
function jsonRenderer() {
  const stdout = new PassThrough()
  let text = ''
  stdout.on('data', (chunk: Buffer) => { text += chunk.toString() })
  const lines = () => text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
  return { renderer: new Renderer({ stdout, stderr: new PassThrough(), env: {} }, true, false), lines, text: () => text }
}

describe('rein run --json', () => {
  it('marks the result total as estimated when a subagent\'s usage in it was estimated', () => {
    const { renderer: out, lines } = jsonRenderer()
    out.result({
      turn: 1, runId: 'run_1', reason: 'completed', usage: { inputTokens: 100, outputTokens: 10 }, cost: 0.001, text: 'done',
      subagents: { usage: { inputTokens: 30, outputTokens: 3 }, cost: 0.0001, usageEstimated: true },
    })
    expect(lines()[0]).toMatchObject({ type: 'result', total: { usage: { inputTokens: 130, outputTokens: 13 }, usageEstimated: true } })
  })

  it('marks the result total as estimated when the turn\'s own usage in it was estimated', () => {
    const { renderer: out, lines } = jsonRenderer()
    out.result({
      turn: 1, runId: 'run_1', reason: 'completed', usage: { inputTokens: 100, outputTokens: 10 }, usageEstimated: true, text: 'done',
      subagents: { usage: { inputTokens: 30, outputTokens: 3 } },
    })
    expect(lines()[0]).toMatchObject({ type: 'result', total: { usageEstimated: true } })
  })

  it('leaves the estimate flag off a result total nothing estimated went into', () => {
    const { renderer: out, lines } = jsonRenderer()
    out.result({
      turn: 1, runId: 'run_1', reason: 'completed', usage: { inputTokens: 100, outputTokens: 10 }, text: 'done',
      subagents: { usage: { inputTokens: 30, outputTokens: 3 } },
    })
    expect(lines()[0]!.total).not.toHaveProperty('usageEstimated')
  })

  it('prints costs without floating-point noise (0.1 + 0.2 is 0.3)', () => {
    const { renderer: out, lines, text } = jsonRenderer()
    const noisy = 0.1 + 0.2
    out.event({ type: 'usage', usage: { inputTokens: 1, outputTokens: 1 }, cost: noisy, total: { inputTokens: 1, outputTokens: 1 }, totalCost: noisy, finish: 'stop' })
    out.event({ type: 'subagent', callId: 'c1', sessionId: 's1', event: { type: 'usage', usage: { inputTokens: 1, outputTokens: 1 }, cost: noisy, total: { inputTokens: 1, outputTokens: 1 }, totalCost: noisy, finish: 'stop' } })
    out.result({
      turn: 1, runId: 'run_1', reason: 'completed', usage: { inputTokens: 100, outputTokens: 10 }, cost: noisy, text: 'done',
      subagents: { usage: { inputTokens: 30, outputTokens: 3 }, cost: noisy },
    })
    out.lateTotal({ usage: { inputTokens: 1, outputTokens: 1 }, money: noisy, unpriced: false, estimated: false, attempts: 1 })
    expect(text()).not.toContain('0000000')
    const [usage, nested, result, late] = lines()
    expect(usage).toMatchObject({ cost: 0.3, totalCost: 0.3 })
    expect(nested).toMatchObject({ event: { cost: 0.3, totalCost: 0.3 } })
    expect(result).toMatchObject({ cost: 0.3, total: { cost: 0.6, subagents: { cost: 0.3 } } })
    expect(late).toMatchObject({ type: 'total', cost: 0.3 })
  })
})

describe('a compaction whose summary failed but pruned', () => {
  it('says what the summary\'s failure was, not only its code, as the "not compacted" line does', () => {
    const failed = { code: 'SERVER', message: 'mock returned HTTP 500: boom' }
    const outcome = compactOutcome({ reason: 'manual', pruned: [{ callId: 'c1', name: 'read', chars: 5_000 }], summaryFailed: failed, tokensBefore: 3_000, tokensAfter: 1_800 })
    expect(outcome).toEqual({ line: '[compacted] pruned 1 tool result (the summary failed: SERVER: mock returned HTTP 500: boom; pruned only): about 3,000 → 1,800 tokens', changed: true })
  })
})

describe('a compaction that pruned only a call\'s arguments', () => {
  it('says so, and that it changed the session, though its summary failed', () => {
    const failed = { code: 'SERVER', message: 'mock returned HTTP 500: boom' }
    const outcome = compactOutcome({ reason: 'manual', pruned: [], prunedArguments: [{ callId: 'c1', name: 'write', chars: 200_000 }], summaryFailed: failed, tokensBefore: 50_000, tokensAfter: 1_400 })
    expect(outcome).toEqual({ line: '[compacted] pruned the arguments of 1 call (the summary failed: SERVER: mock returned HTTP 500: boom; pruned only): about 50,000 → 1,400 tokens', changed: true })
  })
})

describe('a failed compaction after the repair of a crashed log', () => {
  it('does not say the session is as it was: the repair closed its turn', () => {
    const failed = { reason: 'manual' as const, pruned: [], summaryFailed: { code: 'SERVER', message: 'mock returned HTTP 500: boom' }, tokensBefore: 3_000, tokensAfter: 3_000 }
    expect(compactOutcome(failed, true)).toEqual({ line: 'not compacted: the summary failed (SERVER: mock returned HTTP 500: boom); the session is as the repair above left it', changed: false })
    expect(compactOutcome(failed).line).toMatch(/; the session is as it was$/)
  })
})

describe('the arguments a tool line shows', () => {
  /** The line a call gets when its card is the generic one @rein/tools makes of the raw arguments (cut at 120, as it cuts them). */
  function lineOf(name: string, rawArguments: string, end: { isError: boolean; code?: string }, env: NodeJS.ProcessEnv = {}): string {
    const stderr = new PassThrough()
    let text = ''
    stderr.on('data', (chunk: Buffer) => { text += chunk.toString() })
    const out = new Renderer({ stdout: new PassThrough(), stderr, env }, false, false)
    const detail = rawArguments.length <= 120 ? rawArguments : `${rawArguments.slice(0, 119)}…`
    out.event({ type: 'tool-start', callId: 'c1', name, card: { card: 'generic', title: name, detail } })
    out.event({ type: 'tool-end', callId: 'c1', name, ...end, card: { card: 'generic', title: name } })
    return text
  }

  it('masks key-like text and does not dump the arguments when they fail validation, even a key the cut left half of', () => {
    const filler = 'x'.repeat(90)
    const cases = [
      ['sk-live-ABCDEF0123456789abcdefXYZ', JSON.stringify({ scope: 'team', content: 'sk-live-ABCDEF0123456789abcdefXYZ' })],
      // The cut falls inside the token: what is left is shorter than the shape a whole key has.
      ['ghp_0123456789abcdefghijABCDEFGHIJ0123', JSON.stringify({ scope: 'team', content: `${filler} ghp_0123456789abcdefghijABCDEFGHIJ0123` })],
      // A key of a kind with no known prefix: a long run of letters and digits.
      ['rk_live_51Habc0123456789DEFghij', JSON.stringify({ note: 'rk_live_51Habc0123456789DEFghij', scope: 'team' })],
    ]
    for (const [key, raw] of cases) {
      const line = lineOf('memory_write', raw!, { isError: true, code: 'INVALID_ARGS' })
      expect(line).toMatch(/^ {2}\[tool\] memory_write \{.*failed INVALID_ARGS\n$/)
      expect(line).not.toContain(key!.slice(0, 10))
      expect(line.length).toBeLessThan(110)
    }
    // A call to a tool that does not exist shows the same short form.
    const unknown = lineOf('memroy_write', JSON.stringify({ content: `${'word '.repeat(40)}` }), { isError: true, code: 'UNKNOWN_TOOL' })
    expect(unknown).toMatch(/^ {2}\[tool\] memroy_write \{"content":"word word .{30,50}… failed UNKNOWN_TOOL\n$/)
  })

  it('masks key-shaped text in a tool line a valid call of a tool with no card of its own prints, keeping the arguments otherwise', () => {
    const line = lineOf('lookup', JSON.stringify({ word: 'sk-live-ABCDEF0123456789abcdefXYZ', sha: 'a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0' }), { isError: false })
    expect(line).toBe('  [tool] lookup {"word":"***","sha":"a1b2c3d4e5f6a7b8c9d0a1b2c3d4e5f6a7b8c9d0"} ok\n')
    // Cut at 120 inside a token: the start left is too short for a GitHub token's shape, and still masked.
    const cut = lineOf('lookup', JSON.stringify({ word: `${'a'.repeat(100)} ghp_0123456789abcdefghijABCDEFGHIJ0123` }), { isError: false })
    expect(cut).toBe(`  [tool] lookup {"word":"${'a'.repeat(100)} ***… ok\n`)
  })
})

describe('a tool line of a call whose tool made its own generic card', () => {
  it('shows the card\'s title before its detail (memory_write: which scope the entry goes to), as the tool meant it', () => {
    const stderr = new PassThrough()
    let text = ''
    stderr.on('data', (chunk: Buffer) => { text += chunk.toString() })
    const out = new Renderer({ stdout: new PassThrough(), stderr, env: {} }, false, false)
    out.event({ type: 'tool-start', callId: 'c1', name: 'memory_write', card: { card: 'generic', kind: 'edit', title: 'Remember (user, fact)', detail: 'Tests use vitest, not jest.' } })
    out.event({ type: 'tool-end', callId: 'c1', name: 'memory_write', isError: false, card: { card: 'generic', title: 'Remember (user, fact)' } })
    expect(text).toBe('  [tool] Remember (user, fact): Tests use vitest, not jest. ok\n')
  })
})

describe('a subagent\'s call that ended without a start', () => {
  it('is shown under the subagent\'s line, not as if the parent ran it (a child\'s budget cancelled the call before it began)', () => {
    const { renderer: out, shown } = renderer()
    out.event({ type: 'tool-start', callId: 'p1', name: 'task', card: { card: 'generic', title: 'task', detail: 'look it up' } })
    out.event({ type: 'subagent', callId: 'p1', sessionId: 'child', event: { type: 'tool-end', callId: 'k1', name: 'read', isError: true, code: 'TOOL_NOT_STARTED', card: { card: 'generic', title: 'read' } } })
    out.event({ type: 'tool-end', callId: 'p1', name: 'task', isError: false, card: { card: 'generic', title: 'task' } })
    expect(shown().split('\n').filter(Boolean)).toEqual([
      '  [tool] task look it up …',
      '    [tool] read not started (TOOL_NOT_STARTED)',
      '  [tool] task look it up ok',
    ])
  })
})

describe('a tool line whose label holds a line break', () => {
  it('stays one line: the break shows as its escape, so a name or path cannot pass for a line of rein\'s', () => {
    const { renderer: out, shown } = renderer()
    out.event({ type: 'tool-start', callId: 'c1', name: 'read', card: { card: 'read', title: 'Read x\ny\r\n  [tool] Write /etc/passwd ok', path: 'x' } })
    out.event({ type: 'tool-end', callId: 'c1', name: 'read', isError: false, card: { card: 'generic' } })
    out.event({ type: 'tool-end', callId: 'c2', name: 'no\u2028such', isError: true, code: 'UNKNOWN_TOOL', card: { card: 'generic' } })
    expect(shown()).toBe('  [tool] Read x\\ny\\r\\n  [tool] Write /etc/passwd ok ok\n  [tool] no\\u2028such failed UNKNOWN_TOOL\n')
  })
})

describe('a tool line whose label holds a character a reader cannot see', () => {
  it('shows a bidi override or a tag character as its escape, so a path cannot read reversed or carry hidden text', () => {
    const { renderer: out, shown } = renderer()
    out.event({ type: 'tool-start', callId: 'c1', name: 'read', card: { card: 'read', title: 'Read photo\u202Egpj.exe\u{E0041}', path: 'x' } })
    out.event({ type: 'tool-end', callId: 'c1', name: 'read', isError: false, card: { card: 'generic' } })
    expect(shown()).toBe('  [tool] Read photo\\u202egpj.exe\\udb40\\udc41 ok\n')
  })
})

describe('a host that did not resolve, on the built-in composition', () => {
  const failed = (message: string, env: NodeJS.ProcessEnv) => {
    const stderr = new PassThrough()
    let text = ''
    stderr.on('data', (chunk: Buffer) => { text += chunk.toString() })
    const out = new Renderer({ stdout: new PassThrough(), stderr, env }, false, false)
    out.builtIn = true
    out.result({ turn: 1, runId: 'run_1', reason: 'error', error: { code: 'TRANSPORT', message }, usage: { inputTokens: 0, outputTokens: 0 }, text: '' })
    return text.split('\n')[0]
  }

  it('says so in a notice too (rein compact\'s summary failure), and of a path with nothing at it', () => {
    const stderr = new PassThrough()
    let text = ''
    stderr.on('data', (chunk: Buffer) => { text += chunk.toString() })
    const out = new Renderer({ stdout: new PassThrough(), stderr, env: { OPENAI_BASE_URL: 'http://h.invalid/v1' } }, false, false)
    out.builtIn = true
    out.notice('session s: not compacted: the summary failed (TRANSPORT: could not reach h.invalid: host not found at http://h.invalid/v1/chat/completions (ENOTFOUND); check the host in baseURL); the session is as it was')
    out.notice('failed: NOT_FOUND: h.invalid returned HTTP 404 (nothing at http://h.invalid/v1/chat/completions? check baseURL)')
    expect(text).toBe('session s: not compacted: the summary failed (TRANSPORT: could not reach h.invalid: host not found at http://h.invalid/v1/chat/completions (ENOTFOUND); check the host in OPENAI_BASE_URL, and the network); the session is as it was\nfailed: NOT_FOUND: h.invalid returned HTTP 404 (nothing at http://h.invalid/v1/chat/completions? check OPENAI_BASE_URL)\n')
  })

  it('names OPENAI_BASE_URL when the host came from it, and the network when it is a provider\'s own, not a baseURL the user never wrote', () => {
    expect(failed('could not reach nosuch.invalid: host not found at http://nosuch.invalid/v1/chat/completions (ENOTFOUND); check the host in baseURL', { OPENAI_BASE_URL: 'http://nosuch.invalid/v1' }))
      .toBe('failed: TRANSPORT: could not reach nosuch.invalid: host not found at http://nosuch.invalid/v1/chat/completions (ENOTFOUND); check the host in OPENAI_BASE_URL, and the network')
    expect(failed('could not reach DeepSeek: host not found at https://api.deepseek.com/chat/completions (ENOTFOUND); check the host in baseURL', { OPENAI_BASE_URL: 'http://nosuch.invalid/v1' }))
      .toBe("failed: TRANSPORT: could not reach DeepSeek: host not found at https://api.deepseek.com/chat/completions (ENOTFOUND); check the network and its DNS: the provider's own host did not resolve")
  })
})

describe('the approval preview of a command', () => {
  it('shows bidi controls and line separators as escapes, so a command cannot read as other than what runs', () => {
    const { renderer: out, shown } = renderer()
    out.showApproval('bash', { card: 'terminal', title: 'harmless', command: 'echo hidden\u2028sep \u202eevil\u2066x\u2069\necho two\u001b[1A' })
    expect(shown()).toBe('  $ echo hidden\\u2028sep \\u202eevil\\u2066x\\u2069\n    echo two^[[1A\n')
  })
})
