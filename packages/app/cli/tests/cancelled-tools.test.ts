// A tool call cut short shows as what it was, never `ok`, and a turn's end reads in the one word
// `rein sessions` uses for it.
import { EventEmitter } from 'node:events'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import type { AgentEvent } from '@rein/agent'
import type { TurnEndReason } from '@rein/session'
import type { MockReply } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { Renderer } from '../src/render.ts'
import { chatTerminal as terminal, projectPerTest, rein, spawnRein } from './harness.ts'

const setUp = projectPerTest(afterEach)
const BASH_ROWS = ["- { id: jobs, name: '@rein/jobs' }", "- { id: bash, name: '@rein/tool-bash' }"]

/** The model runs `command` through bash, described as `sleep`, then (if asked again) answers. */
function sleeping(command: string): MockReply[] {
  return [
    { steps: [{ toolCall: { id: 'c_sleep', name: 'bash', arguments: JSON.stringify({ command, description: 'sleep' }) } }] },
    { steps: [{ text: 'never' }] },
  ]
}

async function untilExists(file: string) {
  await expect.poll(() => existsSync(file), { timeout: 10_000 }).toBe(true)
}

describe('a bash command cancelled while it runs', () => {
  it('shows as cancelled, not ok, in rein chat, and the turn ends cancelled as rein sessions says', async () => {
    const p = await setUp(sleeping('touch started; sleep 4'), { extraRows: BASH_ROWS })
    const chat = terminal(p.dir)
    await expect.poll(chat.screen).toContain('> ')
    chat.type('sleep a while\r')
    await expect.poll(chat.screen).toContain('allow bash')
    chat.type('y\r')
    await untilExists(join(p.dir, 'started'))
    chat.type('\u0003')
    await expect.poll(chat.screen, { timeout: 10_000 }).toMatch(/tokens in [^\n]*\n/)
    chat.type('\u0004')
    expect(await chat.done).toBe(130)
    const screen = chat.screen()
    expect(screen).toContain('[tool] sleep cancelled')
    expect(screen).not.toContain('[tool] sleep ok')
    expect(screen).toMatch(/· cancelled\n/)
    expect(screen).not.toContain('aborted')
    const listed = await rein(p.dir, ['sessions'], { env: { REIN_HOME: p.home } })
    expect(listed.stdout).toContain('cancelled')
  }, 30_000)

  it('shows as cancelled, not ok, in rein run on SIGINT', async () => {
    const p = await setUp(sleeping('touch started; sleep 4'), { extraRows: BASH_ROWS })
    const signals = new EventEmitter()
    const running = rein(p.dir, ['run', '--yes', 'sleep a while'], { signals })
    await untilExists(join(p.dir, 'started'))
    signals.emit('SIGINT', 'SIGINT')
    const run = await running
    expect(run.code).toBe(130)
    expect(run.stderr).toContain('[tool] sleep cancelled')
    expect(run.stderr).not.toContain('[tool] sleep ok')
    expect(run.stderr).toMatch(/· cancelled\n/)
  }, 30_000)
})

describe('a bash command stopped by SIGTERM while it runs', () => {
  it('reads interrupted, as the turn does, not cancelled', async () => {
    const p = await setUp(sleeping('touch started; sleep 20'), { extraRows: BASH_ROWS })
    // Killed for real once the command started: nothing shows on stdout before it.
    const run = await spawnRein(p.dir, ['run', '--yes', 'sleep a while'], undefined, { REIN_HOME: p.home }, [], (child) => {
      const poll = setInterval(() => {
        if (!existsSync(join(p.dir, 'started'))) return
        clearInterval(poll)
        child.kill('SIGTERM')
      }, 20)
    })
    expect(run.code).toBe(130)
    expect(run.stdout).toBe('')
    expect(run.stderr).toContain('[tool] sleep interrupted\n')
    expect(run.stderr).not.toContain('[tool] sleep cancelled')
    expect(run.stderr).toMatch(/· interrupted\n/)
  }, 30_000)
})

function renderer() {
  const stderr = new PassThrough()
  let text = ''
  stderr.on('data', (chunk: Buffer) => { text += chunk.toString() })
  return { renderer: new Renderer({ stdout: new PassThrough(), stderr, env: {} }, false, false), shown: () => text }
}

const start = (callId: string, title: string): AgentEvent => ({ type: 'tool-start', callId, name: 'bash', card: { card: 'terminal', title, command: title } })
const end = (callId: string, fields: Partial<Extract<AgentEvent, { type: 'tool-end' }>>): AgentEvent => ({ type: 'tool-end', callId, name: 'bash', isError: false, card: { card: 'generic' }, ...fields })

describe('a tool line', () => {
  const cases: [string, Partial<Extract<AgentEvent, { type: 'tool-end' }>>, string][] = [
    ['a clean exit', { card: { card: 'terminal', output: 'done', exitCode: 0, signal: null } }, 'ok'],
    ['a command cancelled while it ran', { card: { card: 'terminal', output: 'begun\n[cancelled]\n[killed by signal SIGTERM]', exitCode: null, signal: 'SIGTERM', stopped: 'cancelled' } }, 'cancelled'],
    ['a command that timed out', { card: { card: 'terminal', output: '[timed out after 300 ms]\n[killed by signal SIGTERM]', exitCode: null, signal: 'SIGTERM', stopped: 'timed-out' } }, 'timed out'],
    ['a command killed by a signal of its own', { card: { card: 'terminal', output: '[killed by signal SIGKILL]', exitCode: null, signal: 'SIGKILL' } }, 'killed by SIGKILL'],
    ['a command whose own output says [cancelled] and exits 0', { card: { card: 'terminal', output: '[cancelled]', exitCode: 0, signal: null } }, 'ok'],
    ['a call the registry answered ABORTED', { isError: true, code: 'ABORTED' }, 'cancelled'],
    ['a call never started', { isError: true, code: 'ABORTED_BEFORE_DISPATCH' }, 'not started (ABORTED_BEFORE_DISPATCH)'],
    ['a call a budget left unrun', { isError: true, code: 'BUDGET_EXCEEDED' }, 'not started (BUDGET_EXCEEDED)'],
    ['a call the turn ended before', { isError: true, code: 'TOOL_NOT_STARTED' }, 'not started (TOOL_NOT_STARTED)'],
    ['a subagent cancelled', { isError: true, code: 'SUBAGENT_CANCELLED' }, 'cancelled (SUBAGENT_CANCELLED)'],
    ['a subagent interrupted', { isError: true, code: 'SUBAGENT_INTERRUPTED' }, 'interrupted (SUBAGENT_INTERRUPTED)'],
    ['a failure', { isError: true, code: 'TOOL_FAILED' }, 'failed TOOL_FAILED'],
  ]
  for (const [what, fields, status] of cases) {
    it(`reads "${status}" for ${what}, in the turn's calls and in a subagent's`, () => {
      const { renderer: out, shown } = renderer()
      out.event(start('c1', 'sleep'))
      out.event(end('c1', fields))
      out.event({ type: 'tool-start', callId: 'c2', name: 'delegate', card: { card: 'generic', title: 'delegate' } })
      out.event({ type: 'subagent', callId: 'c2', sessionId: 's2', event: start('k1', 'sleep') })
      out.event({ type: 'subagent', callId: 'c2', sessionId: 's2', event: end('k1', fields) })
      expect(shown()).toContain(`  [tool] sleep ${status}\n`)
      expect(shown()).toContain(`    [tool] sleep ${status}\n`)
    })
  }
})

describe('the last line of a turn', () => {
  // As README documents them for `rein sessions`.
  const words: Record<TurnEndReason, string> = {
    'completed': 'completed', 'aborted': 'cancelled', 'error': 'failed', 'budget': 'over budget', 'max-tokens': 'cut off', 'interrupted': 'interrupted',
  }
  for (const [reason, word] of Object.entries(words)) {
    it(`reads "${word}" for a turn that ended ${reason}, as rein sessions lists it`, () => {
      const { renderer: out, shown } = renderer()
      out.result({ turn: 1, runId: 'run_1', reason: reason as TurnEndReason, usage: { inputTokens: 1, outputTokens: 1 }, text: '', error: { code: 'SOME_CODE', message: 'what went wrong' } })
      expect(shown()).toMatch(new RegExp(`^${word}: SOME_CODE: what went wrong\\n[^\\n]* · ${word}\\n$`))
    })
  }
})
