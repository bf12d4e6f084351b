import { EventEmitter } from 'node:events'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { openAiDialect, toWireRequest } from '@rein/llm-openai'
import { deriveMessages, type CoreEventData } from '@rein/session'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { validateSessionInvariants, type MockReply } from '@rein/testkit'
import { TOOL_EFFECTS } from '@rein/tools'
import { afterEach, describe, expect, it } from 'vitest'
import { ALLOWABLE_EFFECTS } from '../src/args.ts'
import { projectPerTest, rein, sessionIdOf, type Project } from './harness.ts'
import { matchSessionId } from '../src/session-command.ts'

const setUp = projectPerTest(afterEach)

async function storedEvents(p: Project, id: string) {
  return (await new JsonlSessionStore({ root: join(p.home, 'sessions') }).load(id)).events
}

const answer = (text: string): MockReply => ({ steps: [{ text }], usage: { prompt_tokens: 100, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 40 } } })

describe('rein: usage', () => {
  it('each help says what the command does: the demo delegates its check, chat\'s "a" lasts the session, config masks what the code masks, rewind exits 1 on FORK_FAILED', async () => {
    const help = async (command: string) => (await rein('/', [command, '--help'])).stdout.replace(/\s+/g, ' ')
    const demo = await help('demo')
    expect(demo).not.toContain('checks it with bash')
    expect(demo).toContain('a subagent')
    const chat = await help('chat')
    expect(chat).toContain('a allows that tool for the rest of this session')
    const config = await help('config')
    for (const word of ['key', 'token', 'secret', 'password', 'passwd', 'authorization', 'credential', 'headers']) expect(config).toContain(word)
    expect(await help('rewind')).toContain('FORK_FAILED')
  })

  it('rein with no arguments prints its help on stderr, as every usage error, and exits 2', async () => {
    const bare = await rein('/', [])
    expect(bare).toMatchObject({ code: 2, stdout: '' })
    expect(bare.stderr).toContain('Usage: rein <command> [options]')
  })

  it('prints help and exits 0, and refuses unknown commands and flags with exit 2', async () => {
    const help = await rein('/', ['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: rein <command> [options]')
    expect((await rein('/', ['run', '--help'])).stdout).toContain('Usage: rein run "task"')
    const unknown = await rein('/', ['fly'])
    expect(unknown).toMatchObject({ code: 2, stderr: 'rein: unknown command "fly"; commands: run, chat, sessions, resume, show, rewind, compact, memory, config, demo (see rein --help)\n' })
    const flag = await rein('/', ['run', '--turbo', 'x'])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toBe(`rein: rein run does not take --turbo; a task that starts with a dash goes after '--': rein run -- "--turbo …"; see rein run --help\n`)
    expect((await rein('/', ['run', '--max-steps', 'many', 'x'])).stderr).toBe('rein: --max-steps needs a positive whole number, not "many"\n')
    // Number() would take these; a person means none of them.
    for (const raw of ['0x10', '1e3', '1e300', ' 5', '+5', '99999999999999999999']) {
      const run = await rein('/', ['run', '--max-steps', raw, 'x'])
      expect({ raw, code: run.code, stderr: run.stderr }).toEqual({ raw, code: 2, stderr: `rein: --max-steps needs a positive whole number, not "${raw}"\n` })
    }
    for (const raw of ['1e-3', '0x1', 'Infinity', '1,5', '.']) {
      expect((await rein('/', ['run', '--max-cost', raw, 'x'])).stderr).toBe(`rein: --max-cost needs a positive number, not "${raw}"\n`)
    }
    expect((await rein('/', ['run'])).code).toBe(2)
  })

  it('prints its version with --version, and refuses arguments a command does not take', async () => {
    const version = await rein('/', ['--version'])
    expect(version).toEqual({ code: 0, stdout: `rein ${JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')).version}\n`, stderr: '' })
    for (const [argv, message] of [
      [['sessions', 'extra'], 'rein sessions takes no arguments, not "extra"'],
      [['config', 'a', 'b'], 'rein config takes no arguments, not "a b"'],
      [['show', 'one', 'two'], 'rein show takes one argument, not "one two"'],
    ] as const) {
      expect(await rein('/', [...argv])).toMatchObject({ code: 2, stderr: `rein: ${message}; see rein ${argv[0]} --help\n` })
    }
  })

  it('refuses a flag the command does not take, rather than ignoring it (run --dry-run made real changes)', async () => {
    for (const [argv, flag] of [
      [['run', '--dry-run', 'x'], '--dry-run'],
      [['sessions', '--fork'], '--fork'],
      [['show', 'abc', '--model', 'm'], '--model'],
      [['demo', '--config', 'c.yml'], '--config'],
      [['memory', 'list', '--yes'], '--yes'],
      [['--to', '3'], '--to'],
      // compact sends one summary request and runs no tool: a turn's budgets, approvals and system text would be ignored.
      [['compact', 'abc', '--max-cost', '1'], '--max-cost'],
      [['compact', 'abc', '--max-output-tokens', '300'], '--max-output-tokens'],
      [['compact', 'abc', '--max-steps', '2'], '--max-steps'],
      [['compact', 'abc', '--yes'], '--yes'],
      [['compact', 'abc', '--allow', 'write'], '--allow'],
      [['compact', 'abc', '--system', 'x'], '--system'],
    ] as const) {
      const command = argv[0].startsWith('-') ? undefined : argv[0]
      const said = command ? `rein ${command} does not take ${flag}; see rein ${command} --help` : `${flag} goes with a command; see rein --help`
      expect(await rein('/', [...argv])).toMatchObject({ code: 2, stderr: `rein: ${said}\n` })
    }
  })

  it('says which variable a built-in provider needs when --provider names one the environment does not enable', async () => {
    const env = { OPENAI_API_KEY: 'sk-test-only' }
    const deepseek = await rein('/', ['run', '--provider', 'deepseek', 'hi'], { env })
    expect(deepseek).toMatchObject({ code: 2, stderr: 'rein: --provider deepseek needs DEEPSEEK_API_KEY set: the built-in composition adds the DeepSeek row only then (or give a cordis.yml with a @rein/llm-deepseek row)\n' })
    const other = await rein('/', ['run', '--provider', 'mistral', 'hi'], { env })
    expect(other).toMatchObject({ code: 2, stderr: 'rein: the built-in composition has the providers deepseek and openai only; for --provider mistral, give a cordis.yml with its row (rein config shows what is loaded)\n' })
  })

  it('says how to pass a task that starts with a dash', async () => {
    const result = await rein('/', ['run', '-x task'])
    expect(result).toMatchObject({ code: 2 })
    expect(result.stderr).toContain("after '--'")
  })

  it('takes the same effect names in --allow as @rein/tools declares', () => {
    expect(ALLOWABLE_EFFECTS).toEqual(TOOL_EFFECTS)
  })

  it('says REIN_HOME names a file, not a folder, with exit 2 for every command', async () => {
    const p = await setUp([answer('never')])
    const file = join(p.dir, 'not-a-folder')
    writeFileSync(file, 'x')
    for (const argv of [['run', 'hi'], ['sessions'], ['memory', 'list'], ['config'], ['show', 'abc']]) {
      const result = await rein(p.dir, argv, { env: { REIN_HOME: file } })
      expect({ argv, code: result.code, stderr: result.stderr }).toEqual({ argv, code: 2, stderr: `rein: REIN_HOME (${file}) is a file, not a folder: point it at a folder (rein makes it if it is missing)\n` })
    }
    expect(p.server.requests).toHaveLength(0)
  })

  it('says how to configure a model when none is, and creates nothing', async () => {
    const p = await setUp([answer('never')])
    const home = join(p.dir, 'fresh-home')
    const result = await rein('/', ['run', 'hi'], { env: { REIN_HOME: home } })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^rein: no model configured: set DEEPSEEK_API_KEY/)
    expect(existsSync(home)).toBe(false)
  })

  it('says to set the model on the agents row of the cordis.yml in use, not to set variables that are set, when that row has none', async () => {
    const p = await setUp([answer('never')], { agent: { model: undefined } })
    const result = await rein(p.dir, ['run', 'hi'], { env: { OPENAI_API_KEY: 'sk-set', REIN_MODEL: 'm1' } })
    expect({ code: result.code, stderr: result.stderr }).toEqual({
      code: 2,
      stderr: `rein: no model configured: set model on the agents row of ${join(p.dir, 'cordis.yml')}, or give --model <id> (REIN_MODEL is for the built-in composition only)\n`,
    })
    expect(p.server.requests).toHaveLength(0)
  })

  it('names the provider, not the model, when the agents row has a model and no provider, even with --model given', async () => {
    const p = await setUp([answer('never')], { agent: { provider: undefined } })
    const result = await rein(p.dir, ['run', '--model', 'mock-model', 'hi'])
    expect({ code: result.code, stderr: result.stderr }).toEqual({
      code: 2,
      stderr: `rein: no provider configured: set provider on the agents row of ${join(p.dir, 'cordis.yml')}, or give --provider <name>\n`,
    })
  })

  it('names the row of a broken cordis.yml, and nothing runs', async () => {
    const p = await setUp([answer('never')], { extraRows: ['- id: ghost', '  name: rein-plugin-ghost'] })
    const result = await rein(p.dir, ['run', 'hi'])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/row "ghost" \(rein-plugin-ghost\): cannot load the plugin/)
    expect(p.server.requests).toHaveLength(0)
  })

  it('says a package is missing once, in a few lines, naming the file given, without stack frames; --verbose adds the cause', async () => {
    const p = await setUp([answer('never')], { extraRows: ['- id: ghost', '  name: rein-plugin-ghost'] })
    renameSync(join(p.dir, 'cordis.yml'), join(p.dir, 'agent.yml'))
    const result = await rein(p.dir, ['--config', 'agent.yml', 'run', 'hi'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`Cannot find package 'rein-plugin-ghost' imported from ${join(p.dir, 'agent.yml')}`)
    // Once, in the report naming the row: not also as a logged error before it.
    expect(result.stderr.match(/Cannot find package/g)).toHaveLength(1)
    expect(result.stderr).toContain('row "ghost" (rein-plugin-ghost): cannot load the plugin')
    expect(result.stderr).not.toMatch(/^\s+at /m)
    expect(result.stderr).not.toContain('cordis.yml')
    const verbose = await rein(p.dir, ['--config', 'agent.yml', '--verbose', 'run', 'hi'])
    expect(verbose.stderr).toContain("caused by: Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'rein-plugin-ghost'")
  })

  it('--verbose says a configuration error once, then what caused it, not the error a second time', async () => {
    const p = await setUp([answer('never')], { extraRows: ['- id: ghost', '  name: rein-plugin-ghost'] })
    const verbose = await rein(p.dir, ['--verbose', 'run', 'hi'])
    expect(verbose.code).toBe(2)
    expect(verbose.stderr.match(/has a problem:/g)).toHaveLength(1)
    expect(verbose.stderr).toContain("caused by: Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'rein-plugin-ghost'")
  })

  it('--verbose says a usage error once, with its code on that line, not again as the first link of its cause chain', async () => {
    const p = await setUp([answer('never')])
    const verbose = await rein(p.dir, ['--verbose', 'run', 'hi', '--bogus'])
    expect(verbose.code).toBe(2)
    expect(verbose.stderr.split('\n').filter(Boolean)).toEqual([expect.stringMatching(/^rein: USAGE: rein run does not take --bogus; /)])
  })
})

describe('rein run', () => {
  it('reads the task from stdin when it is -, and refuses an empty one', async () => {
    const p = await setUp([answer('Read it.')])
    const run = await rein(p.dir, ['run', '-'], { stdin: 'summarise\nthis file\n' })
    expect(run).toMatchObject({ code: 0, stdout: 'Read it.\n' })
    expect(JSON.stringify(p.server.requests[0]!.body)).toContain('summarise\\nthis file')
    expect(await rein(p.dir, ['run', '-'], { stdin: '  \n' })).toMatchObject({ code: 2, stderr: 'rein: rein run - read no task from stdin\n' })
    expect(await rein(p.dir, ['run', '-', 'and', 'more'], { stdin: 'task' })).toMatchObject({ code: 2, stderr: 'rein: rein run - reads the whole task from stdin: give no other words with it\n' })
  })

  it('masks the value of a secret environment variable in the tool lines it prints', async () => {
    const secret = 'sk-proj-terminal0secret42'
    const p = await setUp([
      { steps: [{ toolCall: { id: 'c1', name: 'lookup', arguments: `{"word":"${secret}"}` } }] },
      answer('done'),
    ])
    const run = await rein(p.dir, ['run', 'look it up'], { env: { REIN_TEST_PROVIDER_API_KEY: secret } })
    expect(run.code).toBe(0)
    expect(run.stderr).toContain('  [tool] lookup {"word":"***"} ok\n')
    expect(run.stderr).not.toContain(secret)
  })

  it('cuts a tool line to one screen line whatever the model sent: a huge path in a card title, a huge unknown tool name', async () => {
    const p = await setUp([
      { steps: [{ toolCall: { id: 'c1', name: 'read', arguments: JSON.stringify({ path: 'a'.repeat(20_000) }) } }, { toolCall: { id: 'c2', name: 'n'.repeat(5_000), arguments: '{}' } }] },
      answer('done'),
    ], { extraRows: ['- id: fs', "  name: '@rein/tool-fs'"] })
    const run = await rein(p.dir, ['run', 'go'])
    expect(run.code).toBe(0)
    const lines = run.stderr.split('\n').filter((line) => line.includes('[tool]'))
    expect(lines).toHaveLength(2)
    for (const line of lines) expect(line.length).toBeLessThan(300)
    expect(lines.join('\n')).toContain('…')
  })

  it('masks the start of a secret that the tool line cuts short', async () => {
    const secret = 'sk-proj-terminal0secret42'
    const pad = 'a'.repeat(100)
    const p = await setUp([
      { steps: [{ toolCall: { id: 'c1', name: 'lookup', arguments: `{"word":"${pad}${secret}"}` } }] },
      answer('done'),
    ])
    const run = await rein(p.dir, ['run', 'look it up'], { env: { REIN_TEST_PROVIDER_API_KEY: secret } })
    expect(run.stderr).toContain(`  [tool] lookup {"word":"${pad}***… ok\n`)
    expect(run.stderr).not.toContain('sk-proj-te')
  })

  it('streams the answer, a line per tool call, and the totals; the session can be shown and listed', async () => {
    const p = await setUp([
      { steps: [{ text: 'Looking it up. ' }, { toolCall: { id: 'c1', name: 'lookup', arguments: '{"word":"rein"}' } }], usage: { prompt_tokens: 100, completion_tokens: 10 } },
      answer('A rein steers a horse.'),
    ], { pricing: true })
    const run = await rein(p.dir, ['run', 'what is a rein?'])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('Looking it up. \nA rein steers a horse.\n')
    const id = sessionIdOf(run)
    expect(run.stderr).toContain('  [tool] lookup {"word":"rein"} ok\n')
    expect(run.stderr).toMatch(/tokens in 200 \(cached 40\) out 20 · cost 0\.00050 · completed\n$/)
    const events = await storedEvents(p, id)
    expect(validateSessionInvariants(events)).toEqual([])
    const show = await rein(p.dir, ['show', id])
    expect(show.code).toBe(0)
    expect(show.stdout).toContain('> what is a rein?')
    expect(show.stdout).toContain('  → lookup {"word":"rein"}')
    expect(show.stdout).toContain('── completed')
    const list = await rein(p.dir, ['sessions'])
    expect(list.stdout).toMatch(new RegExp(`^${id}  [\\d-]+ [\\d:]+ UTC  completed +mock-model +1 turn +220 tok +0\\.00050  what is a rein\\?\\n$`))
  })

  it('marks estimated tokens with ~ in sessions, as run does, when the server reports no usage', async () => {
    const p = await setUp([{ steps: [{ text: 'no counts from me' }], usage: null }])
    const run = await rein(p.dir, ['run', 'hi'])
    expect(run.stderr).toMatch(/~tokens in \d+/)
    const list = await rein(p.dir, ['sessions'])
    expect(list.stdout).toMatch(/completed +mock-model +1 turn +~\d+ tok/)
  })

  it('prints JSON lines with --json', async () => {
    const p = await setUp([answer('ok')])
    const run = await rein(p.dir, ['run', '--json', 'hi'])
    const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string })
    expect(lines.map((line) => line.type)).toEqual(['session', 'turn-start', 'context', 'text-delta', 'attempt', 'usage', 'turn-end', 'result'])
    expect(lines.at(-1)).toMatchObject({ type: 'result', reason: 'completed', text: 'ok' })
  })

  it('continues a session with --session', async () => {
    const p = await setUp([answer('first'), answer('second')])
    const id = sessionIdOf(await rein(p.dir, ['run', 'one']))
    const again = await rein(p.dir, ['run', '--session', id, 'two'])
    expect(again.code).toBe(0)
    const messages = (p.server.requests[1]!.body as { messages: { role: string; content: string }[] }).messages
    expect(messages.map((message) => `${message.role}:${message.content}`)).toEqual(['user:one', 'assistant:first', 'user:two'])
  })

  it('takes the start of a session id, as long as only one session starts so, in show and run --session', async () => {
    const p = await setUp([answer('first'), answer('second'), answer('third')])
    const id = sessionIdOf(await rein(p.dir, ['run', 'one']))
    const other = sessionIdOf(await rein(p.dir, ['run', 'two']))
    let short = 4
    while (id.slice(0, short) === other.slice(0, short)) short++
    const prefix = id.slice(0, short)
    const shown = await rein(p.dir, ['show', prefix])
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain(`session ${id} · created`)
    expect((await rein(p.dir, ['run', '--session', prefix, 'three'])).code).toBe(0)
    const messages = (p.server.requests[2]!.body as { messages: { role: string; content: string }[] }).messages
    expect(messages.map((message) => message.content)).toEqual(['one', 'first', 'three'])
  })

  it('takes the start of an unreadable session\'s id to that session, so the command names what is wrong with its file, and counts it among those a start is ambiguous between', async () => {
    const p = await setUp([answer('first'), answer('second')])
    const id = sessionIdOf(await rein(p.dir, ['run', 'one']))
    const other = sessionIdOf(await rein(p.dir, ['run', 'two']))
    let short = 4
    while (id.slice(0, short) === other.slice(0, short)) short++
    const file = join(p.home, 'sessions', `${id}.jsonl`)
    const lines = readFileSync(file, 'utf8').split('\n')
    writeFileSync(file, [...lines.slice(0, 2), '{"garbled', ...lines.slice(3)].join('\n'))
    for (const argv of [['show', id.slice(0, short)], ['resume', id.slice(0, short), 'go on'], ['compact', id.slice(0, short)]]) {
      const run = await rein(p.dir, argv)
      expect({ argv, code: run.code }).toEqual({ argv, code: 2 })
      expect(run.stderr).toContain(`${id}.jsonl:3: not valid JSON`)
    }
    // A damaged file whose name starts as a readable session's id does: ambiguous, not silently the readable one.
    writeFileSync(join(p.home, 'sessions', `${other.slice(0, 8)}-0000-4000-8000-000000000000.jsonl`), 'not a session\n', { mode: 0o600 })
    const shared = await rein(p.dir, ['show', other.slice(0, 8)])
    expect(shared.code).toBe(2)
    expect(shared.stderr).toContain(`2 sessions start with ${other.slice(0, 8)}`)
  })

  it('refuses the start of an id that several sessions share, naming them', () => {
    const ids = ['5d0e1111-aaaa', '5d0e2222-bbbb', '7f00-cccc']
    expect(matchSessionId('7f', ids)).toBe('7f00-cccc')
    expect(matchSessionId('nothing-like-it', ids)).toBe('nothing-like-it')
    expect(() => matchSessionId('5d0e', ids)).toThrow('2 sessions start with 5d0e (5d0e1111-aaaa, 5d0e2222-bbbb); give more of the id')
  })

  it('matches a start in its own case before any other: a prefix unique as written stays unique beside an id in capitals', () => {
    expect(matchSessionId('abc', ['abc-1', 'ABC-2'])).toBe('abc-1')
    expect(matchSessionId('FOO', ['foo', 'foo2'])).toBe('foo')
    expect(matchSessionId('7F00', ['5d0e1111-aaaa', '7f00-cccc'])).toBe('7f00-cccc')
    expect(() => matchSessionId('AB', ['abc-1', 'abd-2'])).toThrow('2 sessions start with AB')
  })

  it('exits 3 when a budget ends the turn', async () => {
    const call = (i: number): MockReply => ({ steps: [{ toolCall: { id: `c${i}`, name: 'lookup', arguments: '{"word":"x"}' } }] })
    const p = await setUp([call(1), call(2), call(3)])
    const run = await rein(p.dir, ['run', '--max-steps', '2', 'loop'])
    expect(run.code).toBe(3)
    expect(run.stderr).toContain('over budget: MAX_STEPS: the turn reached its limit of 2 requests')
  })

  it('exits 1 with the reason when the model request fails', async () => {
    const p = await setUp([{ kind: 'error', status: 400, message: 'Invalid model' }])
    const run = await rein(p.dir, ['run', 'hi'])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('failed: INVALID_REQUEST: mock returned HTTP 400: Invalid model')
  })

  it('denies tools that ask for approval unless --yes', async () => {
    const reply = (): MockReply => ({ steps: [{ toolCall: { id: 'n1', name: 'note', arguments: '{"text":"hello"}' } }] })
    const p = await setUp([reply(), answer('done'), reply(), answer('done')])
    const denied = await rein(p.dir, ['run', 'write it'])
    expect(denied.stderr).toContain('  [tool] note {"text":"hello"} failed DENIED\n')
    const allowed = await rein(p.dir, ['run', '--yes', 'write it'])
    expect(allowed.stderr).toContain('  [tool] note {"text":"hello"} ok\n')
    expect(readFileSync(join(p.dir, 'notes.txt'), 'utf8')).toBe('hello\n')
  })

  it('cancels on SIGINT: the call is paired, the log saved, exit 130', async () => {
    const p = await setUp([{ steps: [{ text: 'Thinking about it' }, { stall: true }] }])
    const signals = new EventEmitter()
    let sent = false
    const run = await rein(p.dir, ['run', 'long task'], {
      signals,
      onStdout: (text) => {
        if (sent || !text.includes('Thinking')) return
        sent = true
        signals.emit('SIGINT', 'SIGINT')
      },
    })
    expect(run.stderr).toContain('SIGINT: stopping')
    expect(run.code).toBe(130)
    const events = await storedEvents(p, sessionIdOf(run))
    expect(validateSessionInvariants(events)).toEqual([])
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
    expect(events.find((event) => event.type === 'assistant/message')).toMatchObject({ data: { interrupted: true } })
  })

  it('keeps every request a byte-for-byte extension of the previous one over 20 steps', async () => {
    const steps = 20
    const p = await setUp((request, index) => index < steps - 1
      ? { steps: [{ toolCall: { id: `c${index}`, name: 'lookup', arguments: `{"word":"w${index}"}` } }] }
      : answer('all done'), { agent: { maxSteps: 25 } })
    const run = await rein(p.dir, ['run', 'look up twenty words'])
    expect(run.code).toBe(0)
    const bodies = p.server.requests.map((request) => request.raw)
    expect(bodies).toHaveLength(steps)
    for (let i = 1; i < bodies.length; i++) {
      const previous = JSON.parse(bodies[i - 1]!) as { messages: unknown[] }
      const next = JSON.parse(bodies[i]!) as { messages: unknown[] }
      const prefix = JSON.stringify(previous.messages).slice(0, -1)
      expect(JSON.stringify(next.messages).startsWith(prefix)).toBe(true)
      // Everything outside the messages (model, tools, options) is identical.
      expect({ ...next, messages: [] }).toEqual({ ...previous, messages: [] })
    }
    writeFileSync(join(p.dir, 'request-bytes.json'), JSON.stringify(bodies.map((body) => body.length)))
  })
})

describe('the log is the truth', () => {
  it('rebuilds every request the server received, byte for byte, from the log alone', async () => {
    const p = await setUp([
      { steps: [{ text: 'First. ' }, { toolCall: { id: 'c1', name: 'lookup', arguments: '{"word":"a"}' } }] },
      { steps: [{ toolCall: { id: 'c2', name: 'lookup', arguments: '{"word": "b"}' } }, { toolCall: { id: 'c3', name: 'nope', arguments: '{}' } }] },
      answer('Done.'),
    ], { agent: { system: 'You look words up.' } })
    const run = await rein(p.dir, ['run', 'look up two words'])
    expect(run.code).toBe(0)
    const events = await storedEvents(p, sessionIdOf(run))
    const steps = events.filter((event) => event.type === 'step/start')
    expect(steps).toHaveLength(p.server.requests.length)
    let header: { system?: string; tools?: unknown } = {}
    steps.forEach((step, i) => {
      const answerSeq = events.find((event) => event.seq > step.seq && event.type === 'assistant/message')!.seq
      const before = events.filter((event) => event.seq < answerSeq)
      for (const event of before.filter((event) => event.type === 'request/header')) {
        const data = event.data as unknown as CoreEventData['request/header']
        header = { system: data.system ?? header.system, tools: data.tools ?? header.tools }
      }
      const rebuilt = toWireRequest({
        provider: 'mock', model: 'mock-model', signal: new AbortController().signal,
        ...(header.system ? { system: header.system } : {}),
        messages: deriveMessages(before),
        ...((header.tools as unknown[] | undefined)?.length ? { tools: header.tools as never } : {}),
      }, { maxTokensField: 'max_tokens' }, openAiDialect)
      expect(JSON.stringify(rebuilt)).toBe(p.server.requests[i]!.raw)
    })
  })
})

describe('rein show, sessions, resume: bad input', () => {
  it('refuses a corrupt session file and a missing id with one line and exit 2', async () => {
    const p = await setUp([answer('ok')])
    const id = sessionIdOf(await rein(p.dir, ['run', 'hi']))
    const file = join(p.home, 'sessions', `${id}.jsonl`)
    const lines = readFileSync(file, 'utf8').split('\n')
    lines.splice(2, 1, '{"this is": not json}')
    writeFileSync(file, lines.join('\n'))
    const show = await rein(p.dir, ['show', id])
    expect(show.code).toBe(2)
    expect(show.stderr).toMatch(/^rein: .*\.jsonl:3: not valid JSON; .*\n$/)
    expect((await rein(p.dir, ['show', 'no-such-session'])).code).toBe(2)
    expect((await rein(p.dir, ['resume'])).code).toBe(2)
  })

  it('refuses a session another live process holds', async () => {
    const p = await setUp([answer('ok')])
    const id = sessionIdOf(await rein(p.dir, ['run', 'hi']))
    const holder = spawn('sleep', ['30'])
    try {
      writeFileSync(join(p.home, 'sessions', `${id}.lock`), String(holder.pid))
      const result = await rein(p.dir, ['run', '--session', id, 'again'])
      expect(result.code).toBe(2)
      expect(result.stderr).toContain(String(holder.pid))
    } finally {
      holder.kill()
    }
  })

  it('will not continue a session that ended cleanly without a new message', async () => {
    const p = await setUp([answer('ok')])
    const id = sessionIdOf(await rein(p.dir, ['run', 'hi']))
    const result = await rein(p.dir, ['resume', id])
    expect(result).toMatchObject({ code: 2 })
    expect(result.stderr).toContain('ended cleanly, so there is nothing to continue')
  })

  it('will not continue a session that holds no message (listed as empty), instead of asking the model with none', async () => {
    const p = await setUp([answer('never asked')])
    const id = '00000000-0000-4000-8000-000000000001'
    mkdirSync(join(p.home, 'sessions'), { recursive: true, mode: 0o700 })
    const header = { kind: 'rein-session', formatVersion: 1, id, createdAt: new Date().toISOString(), cwd: p.dir, depth: 0 }
    writeFileSync(join(p.home, 'sessions', `${id}.jsonl`), `${JSON.stringify(header)}\n`, { mode: 0o600 })
    const result = await rein(p.dir, ['resume', id])
    expect(result).toMatchObject({ code: 2 })
    expect(result.stderr).toContain('holds no message for the model to answer')
    expect(p.server.requests).toHaveLength(0)
    expect(readFileSync(join(p.home, 'sessions', `${id}.jsonl`), 'utf8')).toBe(`${JSON.stringify(header)}\n`)
  })
})
