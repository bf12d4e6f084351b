/** How `rein` ends and what it prints: exit codes, config errors, terminal safety (issue #8 §4). */

import { EventEmitter } from 'node:events'
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { validateSessionInvariants, type MockReply } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, rein, sessionIdOf, type Project } from './harness.ts'

const setUp = projectPerTest(afterEach)

/** Runs with REIN_HOME set for the plugins too: they read the process environment, not the CLI's io. */
async function withHome<T>(home: string, run: () => Promise<T>): Promise<T> {
  const before = process.env.REIN_HOME
  process.env.REIN_HOME = home
  try {
    return await run()
  } finally {
    if (before === undefined) delete process.env.REIN_HOME
    else process.env.REIN_HOME = before
  }
}

const sessionFiles = (p: Project) => (existsSync(join(p.home, 'sessions')) ? readdirSync(join(p.home, 'sessions')) : [])
const answer = (text: string): MockReply => ({ steps: [{ text }] })

describe('exit codes', () => {
  it('exits 2 for an unknown --provider and creates nothing', async () => {
    const p = await setUp([answer('never')])
    const run = await rein(p.dir, ['run', '--provider', 'missing', 'hi'])
    expect(run.code).toBe(2)
    expect(run.stderr).toBe('rein: --provider missing: no loaded provider serves "missing"; loaded: mock (add its provider row, or pick one of those)\n')
    expect(sessionFiles(p)).toEqual([])
    expect(p.server.requests).toHaveLength(0)
  })

  it('exits 4 and says the output limit was hit when the model stops for length with no budget set', async () => {
    const p = await setUp([{ steps: [{ text: 'a long answer that was cut' }], finishReason: 'length' }])
    const run = await rein(p.dir, ['run', 'hi'])
    expect(run.code).toBe(4)
    expect(run.stderr).toContain('cut off: MAX_TOKENS: the answer reached')
    expect(run.stderr).not.toContain('budget')
  })

  it('exits 3 when the turn\'s own output budget cut the answer', async () => {
    const p = await setUp([{ steps: [{ text: 'cut' }], finishReason: 'length', usage: { prompt_tokens: 5, completion_tokens: 10 } }])
    const run = await rein(p.dir, ['run', '--max-output-tokens', '10', 'hi'])
    expect(run.code).toBe(3)
    expect(p.server.requests[0]!.body).toMatchObject({ max_tokens: 10 })
  })

  it('with --json, says an error that stops the command as a JSON line on stdout too, with its code and exit code', async () => {
    const p = await setUp([answer('never')])
    const run = await rein(p.dir, ['run', '--json', '--provider', 'missing', 'hi'])
    expect(run.code).toBe(2)
    expect(run.stdout.trim().split('\n').map((line) => JSON.parse(line))).toEqual([{ type: 'error', code: 'UNKNOWN_PROVIDER', exit: 2, message: expect.stringContaining('--provider missing') }])
    const show = await rein(p.dir, ['show', 'nope', '--json'])
    expect(JSON.parse(show.stdout)).toMatchObject({ type: 'error', code: 'SESSION_NOT_FOUND', exit: show.code })
    const usage = await rein(p.dir, ['show', '--json'])
    expect(JSON.parse(usage.stdout)).toMatchObject({ type: 'error', code: 'USAGE', exit: 2 })
    const plain = await rein(p.dir, ['show', 'nope'])
    expect(plain.stdout).toBe('')
    // After `--`, --json is text, not the flag.
    expect((await rein(p.dir, ['run', '--bogus', '--', '--json'])).stdout).toBe('')
  })

  it('documents every exit code in --help', async () => {
    const help = await rein('/', ['--help'])
    for (const line of ['0 completed', '1 the run failed', '2 usage or config', '3 a budget ended the turn', '4 the model hit its output limit', '130 interrupted']) {
      expect(help.stdout).toContain(line)
    }
  })
})

describe('control characters from the model', () => {
  const hostile = 'clear\u001b[2J\u001b]0;owned\u0007 bell\u0007 back\bspace csi\u009b31m done\r\nnext\tline'

  it('are neutralized on a terminal: no escape sequence reaches it', async () => {
    const p = await setUp([answer(hostile)])
    const run = await rein(p.dir, ['run', 'hi'])
    expect(run.code).toBe(0)
    // eslint-disable-next-line no-control-regex
    expect(run.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    expect(run.stdout).toContain('clear^[[2J^[]0;owned^G bell^G back^Hspace csi<9b>31m done\nnext\tline')
  })

  it('stay exact with --json', async () => {
    const p = await setUp([answer(hostile)])
    const run = await rein(p.dir, ['run', '--json', 'hi'])
    const deltas = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; text?: string }).filter((event) => event.type === 'text-delta')
    expect(deltas.map((event) => event.text).join('')).toBe(hostile)
  })

  it('are neutralized in rein show and rein sessions too', async () => {
    const p = await setUp([answer('ok')])
    const id = sessionIdOf(await rein(p.dir, ['run', 'title\u001b[31m red']))
    expect((await rein(p.dir, ['show', id])).stdout).toContain('> title^[[31m red')
    expect((await rein(p.dir, ['sessions'])).stdout).toContain('title^[[31m red')
  })

  it('shows bidi controls and line separators as escapes in rein show, so a command reads as what ran', async () => {
    const p = await setUp([answer('ok \u202eevil\u2069')])
    const id = sessionIdOf(await rein(p.dir, ['run', 'rm \u202etxt.exe\u2028next']))
    const shown = (await rein(p.dir, ['show', id])).stdout
    expect(shown).toContain('> rm \\u202etxt.exe\\u2028next')
    expect(shown).toContain('ok \\u202eevil\\u2069')
    expect(shown).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u2028\u2029]/)
  })
})

describe('rein sessions with a damaged session file', () => {
  it('lists the rest and names the file it could not read, with why', async () => {
    const p = await setUp([answer('ok')])
    const id = sessionIdOf(await rein(p.dir, ['run', 'hi']))
    writeFileSync(join(p.home, 'sessions', 'bbbbbbbb-garbage.jsonl'), 'garbage\n')
    const listed = await rein(p.dir, ['sessions'])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toContain(id)
    expect(listed.stderr).toMatch(/^\(session bbbbbbbb-garbage not listed: .+; rein show bbbbbbbb-garbage says more\)\n$/)
  })

  it('does not say there are no sessions yet when none it holds could be listed, and exits 1, with --json too', async () => {
    const p = await setUp([])
    mkdirSync(join(p.home, 'sessions'), { recursive: true, mode: 0o700 })
    writeFileSync(join(p.home, 'sessions', 'bbbbbbbb-garbage.jsonl'), 'garbage\n')
    const listed = await rein(p.dir, ['sessions'])
    expect(listed.code).toBe(1)
    expect(listed.stderr).toMatch(/not listed: .+\nnone of the 1 stored session could be listed \(above\)\n$/)
    expect(listed.stderr).not.toContain('no sessions yet')
    const json = await rein(p.dir, ['sessions', '--json'])
    expect([json.code, json.stdout]).toEqual([1, ''])
  })
})

describe('rein show of a session whose turn is still running', () => {
  it('says the turn is running, not that it was interrupted', async () => {
    const p = await setUp([{ steps: [{ text: 'partial' }, { stall: true }] }])
    const signals = new EventEmitter()
    const running = rein(p.dir, ['run', 'hi'], { signals })
    while (p.server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
    const id = readdirSync(join(p.home, 'sessions')).find((name) => name.endsWith('.jsonl'))!.replace(/\.jsonl$/, '')
    const shown = await rein(p.dir, ['show', id])
    signals.emit('SIGINT')
    expect((await running).code).toBe(130)
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain('(turn 1 is still running: the session is open in a rein process; show it again once the turn ends)')
    expect(shown.stdout).not.toContain('interrupted')
  })
})

describe('files rein writes', () => {
  it('are 0600 in 0700 folders under $REIN_HOME after a run', async () => {
    const p = await setUp([{ steps: [{ toolCall: { id: 'c1', name: 'lookup', arguments: '{"word":"x"}' } }] }, answer('ok')])
    const home = join(p.dir, 'fresh-home')
    const run = await withHome(home, () => rein(p.dir, ['run', '--config', join(p.dir, 'no-root.yml'), 'hi'], { env: { REIN_HOME: home } }))
    expect(run.code).toBe(0)
    const walk = (dir: string): [string, number][] => readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name)
      const mode = statSync(path).mode & 0o777
      return entry.isDirectory() ? [[path, mode] as [string, number], ...walk(path)] : [[path, mode] as [string, number]]
    })
    const entries = walk(home)
    expect(entries.length).toBeGreaterThan(1)
    for (const [path, mode] of entries) expect([path, mode]).toEqual([path, statSync(path).isDirectory() ? 0o700 : 0o600])
    expect(statSync(home).mode & 0o777).toBe(0o700)
  })
})

describe('--config and REIN_HOME', () => {
  it('puts sessions under $REIN_HOME when the --config file names no session root', async () => {
    const p = await setUp([answer('ok')])
    const home = join(p.dir, 'elsewhere')
    const id = sessionIdOf(await withHome(home, () => rein(p.dir, ['run', '--config', join(p.dir, 'no-root.yml'), 'hi'], { env: { REIN_HOME: home } })))
    expect(existsSync(join(home, 'sessions', `${id}.jsonl`))).toBe(true)
  })
})

describe('resume', () => {
  it('continues, without a new message, a session whose interrupted turn was already repaired', async () => {
    const p = await setUp([{ steps: [{ text: 'Working on it' }, { stall: true }] }, answer('picked up')])
    // A run cut short by an aborted turn: its end is recorded (as a repair would record `interrupted`).
    const { EventEmitter } = await import('node:events')
    const signals = new EventEmitter()
    const first = await rein(p.dir, ['run', 'long job'], { signals, onStdout: (text) => { if (text.includes('Working')) signals.emit('SIGINT', 'SIGINT') } })
    expect(first.code).toBe(130)
    const id = sessionIdOf(first)
    const again = await rein(p.dir, ['resume', id])
    expect(again.code).toBe(0)
    expect(again.stdout).toContain('picked up')
    const events = (await new JsonlSessionStore({ root: join(p.home, 'sessions') }).load(id)).events
    expect(validateSessionInvariants(events)).toEqual([])
  })
})

describe('a model outside the built-in catalogs, with no cordis.yml', () => {
  it('says how to give it a context window and prices without pointing at rows the user does not have', async () => {
    const p = await setUp([answer('one'), answer('two')])
    const env = { OPENAI_BASE_URL: p.server.url, REIN_MODEL: 'mystery-model', REIN_HOME: p.home }
    const run = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['run', 'hi'], { env }))
    expect(run.code).toBe(0)
    expect(run.stderr).not.toContain("in its provider's models")
    expect(run.stderr).not.toContain('set prices on the @rein/llm row)')
    expect(run.stderr).toContain('compaction is off for openai/mystery-model: the built-in composition knows no context window for it; to give it one, write a cordis.yml (rein config shows the built-in rows) whose @rein/llm-openai row has models: [{ id: mystery-model, contextWindow: <tokens> }]\n')
    expect(run.stderr).toContain('cost unknown (a model used has no price; the built-in composition has none for it: write a cordis.yml with prices on its @rein/llm row)')
  })

  it('says compaction is off once, not again for a subagent in the agent\'s words', async () => {
    const p = await setUp([
      { steps: [{ toolCall: { id: 'p1', name: 'subagent', arguments: JSON.stringify({ description: 'dig', prompt: 'child task' }) } }] },
      answer('child answer'),
      answer('parent done'),
    ])
    const env = { OPENAI_BASE_URL: p.server.url, REIN_MODEL: 'mystery-model', REIN_HOME: p.home }
    const run = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['run', '--yes', 'hi'], { env }))
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('parent done')
    expect(run.stderr.match(/compaction is off for openai\/mystery-model/g)).toHaveLength(1)
    expect(run.stderr).not.toContain("in its provider's models")
  })

  it('a resumed session on the built-in composition gets the same advice, once, not the agent\'s row advice', async () => {
    const p = await setUp([answer('one'), answer('two')])
    const env = { OPENAI_BASE_URL: p.server.url, REIN_MODEL: 'mystery-model', REIN_HOME: p.home }
    const run = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['run', 'hi'], { env }))
    const resumed = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['resume', sessionIdOf(run), 'again'], { env }))
    expect(resumed.code).toBe(0)
    expect(resumed.stderr.match(/compaction is off for openai\/mystery-model: the built-in composition knows no context window for it/g)).toHaveLength(1)
    expect(resumed.stderr).not.toContain("in its provider's models")
  })

  it('rein compact on the built-in composition says what to write, not which row to edit', async () => {
    const p = await setUp([answer('one'), answer('two')])
    const env = { OPENAI_BASE_URL: p.server.url, REIN_MODEL: 'mystery-model', REIN_HOME: p.home }
    const run = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['run', 'hi'], { env }))
    const id = sessionIdOf(run)
    const advice = 'the built-in composition knows no context window for it; to give it one, write a cordis.yml (rein config shows the built-in rows) whose @rein/llm-openai row has models: [{ id: mystery-model, contextWindow: <tokens> }]'
    const compact = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['compact', id], { env }))
    expect(compact.code).toBe(2)
    expect(compact.stderr).toContain(`rein: openai/mystery-model has no known context window, so there is nothing to compact against: ${advice}\n`)
    expect(compact.stderr).not.toContain("in its provider's models")
  })
})

describe('advice on the built-in composition, where a flag or a variable was given and there is no row to edit', () => {
  const overflow: MockReply = { kind: 'error', status: 400, message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.", type: 'invalid_request_error', code: 'context_length_exceeded' }

  it('--max-cost on a model with no price names the flag, not a row of a cordis.yml', async () => {
    const p = await setUp([answer('never')])
    const env = { OPENAI_BASE_URL: p.server.url, REIN_MODEL: 'mystery-model', REIN_HOME: p.home }
    const run = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['run', '--max-cost', '0.01', 'hi'], { env }))
    expect(run.code).toBe(2)
    expect(run.stderr).toBe('rein: maxCost is set but provider openai/mystery-model has no price, so cost cannot be counted: the built-in composition has none for it; drop --max-cost, or write a cordis.yml with prices on its @rein/llm row\n')
    expect(p.server.requests).toHaveLength(0)
  })

  it('a provider refusing the conversation as too long says what to write, with no ".;" splice', async () => {
    const p = await setUp([overflow])
    const env = { OPENAI_BASE_URL: p.server.url, REIN_MODEL: 'mystery-model', REIN_HOME: p.home }
    const run = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['run', 'hi'], { env }))
    expect(run.code).toBe(1)
    expect(run.stderr).not.toContain("in its provider's models")
    expect(run.stderr).not.toContain('.;')
    expect(run.stderr).toContain('Please reduce the length of the messages; the context window of openai/mystery-model is not known, so the conversation could not be compacted to fit it: the built-in composition knows no context window for it')
  })

  it('an OPENAI_BASE_URL with no scheme says to set OPENAI_BASE_URL, not to write baseURL', async () => {
    const p = await setUp([answer('never')])
    const env = { OPENAI_BASE_URL: 'notaurl', REIN_MODEL: 'mystery-model', REIN_HOME: p.home }
    const run = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['run', 'hi'], { env }))
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('OPENAI_BASE_URL "notaurl" has no http:// or https:// scheme; set OPENAI_BASE_URL=http://notaurl')
    expect(run.stderr).not.toContain('write baseURL')
  })
})

describe('advice printed when nothing runs, or twice', () => {
  it('rein resume of a session that ended cleanly says only that there is nothing to continue', async () => {
    const p = await setUp([answer('one')])
    const env = { OPENAI_BASE_URL: p.server.url, REIN_MODEL: 'mystery-model', REIN_HOME: p.home }
    const run = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['run', 'hi'], { env }))
    const id = sessionIdOf(run)
    const resumed = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['resume', id], { env }))
    expect(resumed.code).toBe(2)
    expect(resumed.stderr).not.toContain('compaction is off')
    expect(resumed.stderr).toContain('ended cleanly, so there is nothing to continue')
  })

  it('rein compact on the built-in composition gives the context-window advice once', async () => {
    const p = await setUp([answer('one')])
    const env = { OPENAI_BASE_URL: p.server.url, REIN_MODEL: 'mystery-model', REIN_HOME: p.home }
    const run = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['run', 'hi'], { env }))
    const compact = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['compact', sessionIdOf(run)], { env }))
    expect(compact.code).toBe(2)
    expect(compact.stderr.match(/the built-in composition knows no context window for it/g)).toHaveLength(1)
  })
})

describe('which provider the built-in composition uses', () => {
  it('an explicit OPENAI_BASE_URL beats a DEEPSEEK_API_KEY lying around; REIN_MODEL names the model; --verbose says where requests go', async () => {
    const p = await setUp([answer('from the local server')])
    const env = { DEEPSEEK_API_KEY: 'sk-unused-deepseek-key', OPENAI_BASE_URL: p.server.url, REIN_MODEL: 'local-model', REIN_HOME: p.home }
    const run = await withHome(p.home, () => rein(join(p.dir, 'empty'), ['run', '--verbose', 'hi'], { env }))
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('from the local server')
    expect(p.server.requests[0]!.body).toMatchObject({ model: 'local-model' })
    expect(run.stderr).toContain(`provider openai (${new URL(p.server.url).host} at ${p.server.url}) · model local-model`)
    expect(run.stderr).not.toContain('sk-unused')
  })

  it('names the environment, not a file, when the built-in composition is invalid', async () => {
    const run = await rein('/', ['run', 'hi'], { env: { OPENAI_BASE_URL: 'localhost:8080/v1', REIN_MODEL: 'm' } })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('rein: CONFIG_INVALID: the built-in composition (made from DEEPSEEK_API_KEY, OPENAI_API_KEY, OPENAI_BASE_URL and REIN_MODEL) has a problem:')
    expect(run.stderr).toContain('  - OPENAI_BASE_URL "localhost:8080/v1" has no http:// or https:// scheme; set OPENAI_BASE_URL=http://localhost:8080/v1\n')
  })

  it('--verbose with an invalid built-in composition says the problem once, in the environment\'s terms, not again in its rows\' or its file\'s', async () => {
    const run = await rein('/', ['--verbose', 'run', 'hi'], { env: { OPENAI_BASE_URL: 'localhost:8080/v1', REIN_MODEL: 'm' } })
    expect(run.code).toBe(2)
    expect(run.stderr.match(/has no http:\/\/ or https:\/\/ scheme/g)).toHaveLength(1)
    expect(run.stderr).toContain('  - OPENAI_BASE_URL "localhost:8080/v1" has no http:// or https:// scheme; set OPENAI_BASE_URL=http://localhost:8080/v1')
    expect(run.stderr).not.toContain('built-in.cordis.yml')
    expect(run.stderr).not.toContain('write baseURL')
  })

  it('--provider picks a configured provider and its usual model', async () => {
    const { builtInRows } = await import('../src/index.ts')
    const agents = (env: NodeJS.ProcessEnv) => builtInRows(env).find((row) => row.id === 'agents')!.config
    expect(agents({ DEEPSEEK_API_KEY: 'k', OPENAI_BASE_URL: 'http://x/v1' })).toEqual({ provider: 'openai' })
    expect(agents({ DEEPSEEK_API_KEY: 'k', OPENAI_API_KEY: 'k' })).toEqual({ provider: 'deepseek', model: 'deepseek-chat' })
    expect(agents({ OPENAI_API_KEY: 'k', REIN_MODEL: 'gpt-x' })).toEqual({ provider: 'openai', model: 'gpt-x' })
  })
})

describe('rein sessions and the repair report', () => {
  it('lists each session with its status, model, tokens and cost, as text and as JSON', async () => {
    const p = await setUp([{ steps: [{ text: 'ok' }], usage: { prompt_tokens: 100, completion_tokens: 10 } }], { pricing: true })
    const id = sessionIdOf(await rein(p.dir, ['run', 'hello there']))
    const text = await rein(p.dir, ['sessions'])
    expect(text.stdout).toMatch(new RegExp(`^${id}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC  completed     mock-model +1 turn +110 tok +0\\.00028  hello there\\n$`))
    const json = JSON.parse((await rein(p.dir, ['sessions', '--json'])).stdout) as Record<string, unknown>
    expect(json).toMatchObject({ id, status: 'completed', model: 'mock-model', usage: { inputTokens: 100, outputTokens: 10 }, cost: 0.00028 })
  })

  it('says what a repair did even when no call was waiting, in text and in JSON', async () => {
    const p = await setUp([answer('carried on')])
    const store = new JsonlSessionStore({ root: join(p.home, 'sessions') })
    await store.create({ formatVersion: 1, id: 'cut-short', createdAt: '2026-12-01T00:00:00.000Z', cwd: p.dir, depth: 0 })
    await store.append('cut-short', [
      { seq: 0, type: 'turn/start', time: '2026-12-01T00:00:00.000Z', data: { turn: 1 } },
      { seq: 1, type: 'user/message', time: '2026-12-01T00:00:00.000Z', data: { message: { id: 'u1', role: 'user', content: [{ type: 'text', text: 'go' }], source: { kind: 'user' } } } },
      { seq: 2, type: 'step/start', time: '2026-12-01T00:00:00.000Z', data: { turn: 1, step: 1 } },
    ])
    await store.close('cut-short')
    expect((await rein(p.dir, ['sessions'])).stdout).toContain('needs repair')
    const text = await rein(p.dir, ['resume', '--model', 'mock-model', '--provider', 'mock', 'cut-short'])
    expect(text.code).toBe(0)
    expect(text.stderr).toContain('session cut-short had stopped mid-turn; turn 1 is closed as interrupted, and no tool call was waiting for a result')
    expect(text.stdout).toContain('carried on')
  })
})

describe('secrets in what a turn shows', () => {
  it('masks the value of a secret-named variable a server echoed into the turn\'s error line', async () => {
    const secret = 'hunter2hunter2xyz'
    const p = await setUp([{ kind: 'error', status: 400, message: `bad header X-Other: ${secret}` }, { kind: 'error', status: 400, message: `bad header X-Other: ${secret}` }])
    const run = await rein(p.dir, ['run', 'hi'], { env: { OTHER_TOKEN: secret } })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('bad header X-Other: ***')
    expect(run.stderr + run.stdout).not.toContain(secret)
  })
})

describe('a model the server does not have', () => {
  it('rein run -m with a model the server does not have ends with a hint on where the model is set', async () => {
    const notFound: MockReply = { kind: 'error', status: 404, message: 'The model `nosuchmodel` does not exist' }
    const p = await setUp([notFound, notFound])
    const run = await rein(p.dir, ['run', '-m', 'nosuchmodel', 'hi'])
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('failed: INVALID_REQUEST:')
    expect(run.stderr).toContain('hint: the server has no model "nosuchmodel": check --model, REIN_MODEL (the built-in composition) or the model on the agents row of cordis.yml\n')
    // Only a missing model gets the hint.
    const other = await setUp([{ kind: 'error', status: 400, message: 'bad request' }, { kind: 'error', status: 400, message: 'bad request' }])
    expect((await rein(other.dir, ['run', 'hi'])).stderr).not.toContain('hint:')
  })
})
