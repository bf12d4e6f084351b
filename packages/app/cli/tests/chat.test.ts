import { EventEmitter } from 'node:events'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { validateSessionInvariants, type MockReply, type RecordedRequest } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { main, type Io } from '../src/index.ts'
import { chatTerminal as terminal, FIXTURES, project, shownText, type Project } from './harness.ts'

let current: Project | undefined
afterEach(async () => {
  await current?.cleanup()
  current = undefined
})

describe('rein chat', () => {
  it('takes turns, asks before a tool that wants approval, and leaves on Ctrl-D', async () => {
    const note: MockReply = { steps: [{ toolCall: { id: 'n1', name: 'note', arguments: '{"text":"from chat"}' } }] }
    current = await project([{ steps: [{ text: 'Hi there.' }] }, note, { steps: [{ text: 'Noted.' }] }])
    const chat = terminal(current.dir)
    await expect.poll(chat.screen).toContain('> ')
    await chat.turn('hello', 'Hi there.')
    chat.type('take a note\r')
    await expect.poll(chat.screen).toContain('allow note (writes a file)? [y]es / [n]o / [a]lways for this session ')
    chat.type('y\r')
    await expect.poll(chat.answer).toContain('Noted.')
    await expect.poll(() => chat.screen().split('> ').length).toBe(4)
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
    expect(readFileSync(join(current.dir, 'notes.txt'), 'utf8')).toBe('from chat\n')
  })

  it('says the session it announced was not kept when the chat is left before anything was sent', async () => {
    current = await project([])
    const chat = terminal(current.dir)
    await expect.poll(chat.screen).toContain('> ')
    const id = /session (\S+) · /.exec(chat.screen())?.[1]
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
    expect(chat.screen()).toContain(`nothing was sent, so session ${String(id)} was not kept`)
    expect(existsSync(join(current.home, 'sessions', `${String(id)}.jsonl`))).toBe(false)
  })

  it('sends a line typed before the prompt first appeared, not dropping it', async () => {
    current = await project([{ steps: [{ text: 'First answer.' }] }, { steps: [{ text: 'Second answer.' }] }])
    const chat = terminal(current.dir)
    // Typed at once, while the composition still loads.
    chat.type('typed ahead\r')
    await expect.poll(chat.answer).toContain('First answer.')
    await chat.turn('then this', 'Second answer.')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
    expect(current.server.requests).toHaveLength(2)
    expect(JSON.stringify(current.server.requests[0]!.body)).toContain('typed ahead')
  })

  it('asks before a tool that writes; "a" allows that tool for the rest of the chat, and only that tool', async () => {
    current = await project([
      { steps: [{ toolCall: { id: 's1', name: 'save', arguments: '{"text":"one"}' } }] },
      { steps: [{ toolCall: { id: 's2', name: 'save', arguments: '{"text":"two"}' } }] },
      { steps: [{ text: 'Saved twice.' }] },
      { steps: [{ toolCall: { id: 'b1', name: 'build', arguments: '{}' } }] },
      { steps: [{ text: 'Not built.' }] },
    ])
    const chat = terminal(current.dir)
    await expect.poll(chat.screen).toContain('> ')
    chat.type('save two things\r')
    await expect.poll(chat.screen).toContain('allow save (it changes files)? [y]es / [n]o / [a]lways for this session ')
    chat.type('a\r')
    await expect.poll(chat.answer).toContain('Saved twice.')
    // The second save ran without a question.
    expect(chat.screen().split('allow save').length).toBe(2)
    expect(readFileSync(join(current.dir, 'saved.txt'), 'utf8')).toBe('one\ntwo\n')
    await expect.poll(() => chat.screen().split('> ').length).toBe(3)
    // "Always" was for save: build still asks, and "n" denies it.
    chat.type('now build\r')
    await expect.poll(chat.screen).toContain('allow build (it runs commands)? [y]es / [n]o / [a]lways for this session ')
    chat.type('n\r')
    await expect.poll(chat.answer).toContain('Not built.')
    expect(existsSync(join(current.dir, 'builds.txt'))).toBe(false)
    const denied = (current.server.requests[4]!.body as { messages: { role: string; content: string }[] }).messages.at(-1)
    expect(denied).toMatchObject({ role: 'tool', content: 'Error: build was not approved (it runs commands)' })
    await expect.poll(() => chat.screen().split('> ').length).toBe(4)
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  })

  it('runs what --allow covers without asking', async () => {
    current = await project([
      { steps: [{ toolCall: { id: 's1', name: 'save', arguments: '{"text":"quiet"}' } }] },
      { steps: [{ text: 'Saved.' }] },
    ])
    const chat = terminal(current.dir, ['--allow', 'write'])
    await expect.poll(chat.screen).toContain('> ')
    chat.type('save\r')
    await expect.poll(chat.answer).toContain('Saved.')
    expect(chat.screen()).not.toContain('allow save')
    await expect.poll(() => chat.screen().split('> ').length).toBe(3)
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  })

  it('takes Ctrl-C at an approval question as a no and a cancel, with no [error] line', async () => {
    const note: MockReply = { steps: [{ toolCall: { id: 'n1', name: 'note', arguments: '{"text":"from chat"}' } }] }
    current = await project([note, { steps: [{ text: 'Never sent.' }] }])
    const chat = terminal(current.dir)
    await expect.poll(chat.screen).toContain('> ')
    chat.type('take a note\r')
    await expect.poll(chat.screen).toContain('allow note (writes a file)?')
    chat.type('\u0003')
    await expect.poll(chat.screen).toMatch(/· cancelled\n/)
    chat.type('\u0004')
    // The chat's exit code is its last turn's: cancelled.
    expect(await chat.done).toBe(130)
    expect(chat.screen()).not.toContain('[error]')
    expect(existsSync(join(current.dir, 'notes.txt'))).toBe(false)
  })

  it('cancels a running turn on Ctrl-C and keeps the log consistent', async () => {
    current = await project([{ steps: [{ text: 'Working on it' }, { stall: true }] }])
    const chat = terminal(current.dir)
    await expect.poll(chat.screen).toContain('> ')
    chat.type('long job\r')
    await expect.poll(chat.answer).toContain('Working on it')
    chat.type('\u0003')
    await expect.poll(chat.screen).toMatch(/· cancelled\n/)
    chat.type('\u0003')
    expect(await chat.done).toBe(130)
    const id = /session (\S+)/.exec(chat.screen())![1]!
    const events = (await new JsonlSessionStore({ root: join(current.home, 'sessions') }).load(id)).events
    expect(validateSessionInvariants(events)).toEqual([])
    expect(events.at(-1)).toMatchObject({ type: 'turn/end', data: { reason: 'aborted' } })
  })

  it('says a second Ctrl-C while the turn stops leaves the chat, rather than leaving without a word', async () => {
    current = await project([{ steps: [{ text: 'Working on it' }, { stall: true }] }])
    const chat = terminal(current.dir)
    await expect.poll(chat.screen).toContain('> ')
    chat.type('long job\r')
    await expect.poll(chat.answer).toContain('Working on it')
    // One read: the second comes while the first is still stopping the turn.
    chat.type('\u0003\u0003')
    expect(await chat.done).toBe(130)
    expect(chat.screen()).toContain('Ctrl-C again: leaving the chat once the turn has stopped (the session is saved)')
  })

  it('needs a terminal', async () => {
    current = await project([])
    const stderr = new PassThrough()
    let text = ''
    stderr.on('data', (chunk: Buffer) => { text += chunk.toString() })
    const io: Io = { stdin: new PassThrough(), stdout: new PassThrough(), stderr, env: {}, cwd: current.dir, signals: new EventEmitter() as unknown as Io['signals'] }
    expect(await main(['chat'], io)).toBe(2)
    expect(text).toBe('rein: rein chat needs a terminal; for scripts use rein run "…"\n')
  })
})

describe('rein chat: typing ahead while a turn answers (issue #8)', () => {
  it('queues lines typed while a turn runs and sends them in order, keeping them out of the answer and showing each as it is sent', async () => {
    let release = () => {}
    const held = new Promise<void>((resolve) => { release = resolve })
    current = await project([
      { steps: [{ text: 'Thinking' }, { waitFor: held }, { text: ' done.' }] },
      { steps: [{ text: 'Second.' }] },
      { steps: [{ text: 'Third.' }] },
    ])
    const chat = terminal(current.dir)
    await expect.poll(chat.screen).toContain('> ')
    chat.type('first\r')
    await expect.poll(chat.answer).toContain('Thinking')
    chat.type('second\rthi')
    await expect.poll(() => current?.server.requests.length).toBe(1)
    release()
    await expect.poll(chat.answer).toContain('Second.')
    const screen = chat.screen()
    const firstEnded = screen.indexOf('completed')
    expect(firstEnded).toBeGreaterThan(0)
    // Nothing typed reached the screen while the first turn streamed its answer there.
    expect(screen.slice(0, firstEnded)).not.toContain('second')
    expect(screen.slice(0, firstEnded)).not.toContain('thi')
    expect(screen.slice(firstEnded)).toContain('> second\n')
    // The line half typed comes back at the prompt, to be finished.
    // (The `.` is the escape of the cursor move that may follow.)
    await expect.poll(chat.screen).toMatch(/> thi(?:.\[\d+G)?$/)
    chat.type('rd\r')
    await expect.poll(chat.answer).toContain('Third.')
    const users = current.server.requests.map((request) => (request.body as { messages: { role: string; content: string }[] }).messages.filter((message) => message.role === 'user').map((message) => message.content))
    expect(users).toEqual([['first'], ['first', 'second'], ['first', 'second', 'third']])
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  })
})

describe('rein chat: a question while the prompt waits', () => {
  /** A chat whose `go` starts background subagents (`children`), each asking to save once the prompt waits again. */
  async function backgroundAsks(children: string[]) {
    let release = () => {}
    const parentDone = new Promise<void>((resolve) => { release = resolve })
    const text = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content))
    current = await project((request: RecordedRequest) => {
      const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages
      const users = messages.filter((message) => message.role === 'user').map((message) => text(message.content))
      const last = messages.at(-1)
      const child = children.find((name) => users[0] === `child task ${name}`)
      // A child asks only once the parent's turn is over and the prompt waits.
      if (child) return last?.role === 'tool' ? { steps: [{ text: 'child done' }] } : { steps: [{ waitFor: parentDone }, { toolCall: { id: `c${child}`, name: 'save', arguments: JSON.stringify({ text: `from ${child}` }) } }] }
      if (last?.role === 'tool') return { steps: [{ text: 'Started them.' }] }
      if (users.at(-1) === 'go') return { steps: children.map((name) => ({ toolCall: { id: `p${name}`, name: 'subagent', arguments: JSON.stringify({ description: name, prompt: `child task ${name}`, run_in_background: true }) } })) }
      return { steps: [{ text: `echo: ${String(users.at(-1))}` }] }
    }, { extraRows: ["- id: jobs\n  name: '@rein/jobs'", "- id: subagents\n  name: '@rein/subagents'"] })
    const chat = terminal(current.dir)
    await expect.poll(chat.screen).toContain('> ')
    chat.type('go\r')
    await expect.poll(chat.answer).toContain('Started them.')
    await expect.poll(() => chat.screen().split('> ').length).toBe(3)
    return { chat, release }
  }

  it('asks a background subagent\'s question with the half-typed line set aside, then brings the prompt back with it', async () => {
    const { chat, release } = await backgroundAsks(['A'])
    chat.type('hel')
    release()
    await expect.poll(chat.screen).toContain('allow save')
    // What was typed is not part of the answer: "y" allows.
    expect(chat.screen().split('allow save')[1]).not.toContain('hel')
    chat.type('y\r')
    // The prompt, then the line given back (readline may place the cursor in between).
    await expect.poll(() => (chat.screen().split('allow save')[1] ?? '').replace(/.\[\d+G/g, '')).toMatch(/> hel$/)
    chat.type('lo there\r')
    await expect.poll(chat.answer).toContain('echo: hello there')
    expect(readFileSync(join(current!.dir, 'saved.txt'), 'utf8')).toBe('from A\n')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  })

  it('asks two background subagents\' questions one after the other, each answer going to its own question, none to the model', async () => {
    const { chat, release } = await backgroundAsks(['A', 'B'])
    release()
    await expect.poll(chat.screen).toContain('allow save')
    chat.type('y\r')
    await expect.poll(() => chat.screen().split('allow save').length).toBe(3)
    chat.type('y\r')
    await expect.poll(() => (existsSync(join(current!.dir, 'saved.txt')) ? readFileSync(join(current!.dir, 'saved.txt'), 'utf8').split('\n').filter(Boolean).sort() : [])).toEqual(['from A', 'from B'])
    const userTexts = current!.server.requests.flatMap((request) => (request.body as { messages: { role: string; content: unknown }[] }).messages.filter((message) => message.role === 'user').map((message) => message.content))
    expect(userTexts).not.toContain('y')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  })
})

describe('rein chat: saving the cordis.yml in use (issue #9 §6)', () => {
  const deadline = { timeout: 15_000 }

  /** A chat on a project scripted by `script`, at its first prompt, with its cordis.yml as it was and its mock server. */
  async function chatAtPrompt(script: Parameters<typeof project>[0]) {
    current = await project(script)
    const file = join(current.dir, 'cordis.yml')
    const original = readFileSync(file, 'utf8')
    const chat = terminal(current.dir)
    await expect.poll(chat.screen).toContain('> ')
    return { chat, file, original, server: current.server }
  }

  it('applies an edit at the next turn and says which rows changed; refuses a bad edit and keeps going', async () => {
    const { chat, server, file, original } = await chatAtPrompt((_request, index) => ({ steps: [{ text: `Answer ${index + 1}.` }] }))
    chat.type('hello\r')
    await expect.poll(chat.answer).toContain('Answer 1.')

    const edited = original.replace('label: mock,', "label: mock, headers: { X-Edited: 'yes' },")
    writeFileSync(file, edited)
    await expect.poll(chat.screen, deadline).toContain('cordis.yml reloaded, in effect from the next turn: changed model')
    chat.type('again\r')
    await expect.poll(chat.answer).toContain('Answer 2.')
    expect(server.requests[0]!.headers['x-edited']).toBeUndefined()
    expect(server.requests[1]!.headers['x-edited']).toBe('yes')

    const broken = edited.replace('label: mock,', 'lable: mock,')
    writeFileSync(file, broken)
    await expect.poll(chat.screen, deadline).toContain('cordis.yml was not applied; the rows keep running as they were: ')
    expect(chat.screen()).toContain('row "model" (@rein/llm-openai): config.lable: unknown key; did you mean label?')
    chat.type('still there?\r')
    await expect.poll(chat.answer).toContain('Answer 3.')
    expect(server.requests[2]!.headers['x-edited']).toBe('yes')

    chat.type('\u0004')
    expect(await chat.done).toBe(0)
    // rein only read the file.
    expect(readFileSync(file, 'utf8')).toBe(broken)
  })
  it('lets the running turn finish with the rows it began with when the file is saved mid-answer, then applies the edit', async () => {
    const { chat, server, file } = await chatAtPrompt((_request, index) => ({ steps: index === 0 ? [{ text: 'Slow ' }, { delayMs: 2_000 }, { text: 'answer.' }] : [{ text: `Answer ${index + 1}.` }] }))
    chat.type('hello\r')
    await expect.poll(chat.answer).toContain('Slow')
    writeFileSync(file, readFileSync(file, 'utf8').replace('label: mock,', "label: mock, headers: { X-Edited: 'yes' },"))
    await expect.poll(chat.screen, deadline).toContain('cordis.yml saved; it is applied when the running turn ends')
    await expect.poll(chat.answer, deadline).toContain('Slow answer.')
    await expect.poll(chat.screen, deadline).toContain('cordis.yml reloaded, in effect from the next turn: changed model')
    chat.type('again\r')
    await expect.poll(chat.answer).toContain('Answer 2.')
    expect(server.requests[1]!.headers['x-edited']).toBe('yes')
    expect(chat.screen()).not.toContain('unloaded mid-request')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  })

  it('applies two saves made during one turn as one edit, told once, without a second "no row changed"', async () => {
    // The first answer waits until both saves were seen, so they land in its turn however slow the machine.
    let release: () => void = () => {}
    const bothSeen = new Promise<void>((resolve) => { release = resolve })
    const { chat, server, file, original } = await chatAtPrompt((_request, index) => ({ steps: index === 0 ? [{ text: 'Slow ' }, { waitFor: bothSeen }, { text: 'answer.' }] : [{ text: `Answer ${index + 1}.` }] }))
    chat.type('hello\r')
    await expect.poll(chat.answer).toContain('Slow')
    writeFileSync(file, original.replace('label: mock,', "label: mock, headers: { X-Edited: 'one' },"))
    await expect.poll(chat.screen, deadline).toContain('cordis.yml saved; it is applied when the running turn ends')
    writeFileSync(file, original.replace('label: mock,', "label: mock, headers: { X-Edited: 'two' },"))
    await expect.poll(() => chat.screen().split('it is applied when the running turn ends').length, deadline).toBe(3)
    release()
    await expect.poll(chat.screen, deadline).toContain('cordis.yml reloaded, in effect from the next turn: changed model')
    chat.type('again\r')
    await expect.poll(chat.answer).toContain('Answer 2.')
    expect(server.requests[1]!.headers['x-edited']).toBe('two')
    expect(chat.screen().split('cordis.yml reloaded').length).toBe(2)
    expect(chat.screen()).not.toContain('no row changed')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  }, 30_000)

  it('keeps the chat going when the agents row is saved before the first message, and says it reaches new sessions only', async () => {
    const { chat, file, original } = await chatAtPrompt((_request, index) => ({ steps: [{ text: `Answer ${index + 1}.` }] }))
    const edited = original.replace(/(- id: agents\n  name: '@rein\/agent'\n  config: )\{/, '$1{"maxSteps":7,')
    expect(edited).not.toBe(original)
    writeFileSync(file, edited)
    await expect.poll(chat.screen, deadline).toContain('(row agents sets agent options: they apply to new sessions, not this chat)')
    chat.type('hello\r')
    await expect.poll(chat.answer).toContain('Answer 1.')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  })
})

describe('/compact in a chat', () => {
  it('says /compact changed nothing, and the provider\'s words for why, when the summary fails', async () => {
    const refused: MockReply = { kind: 'error', status: 401, message: 'Incorrect API key provided', type: 'invalid_request_error' }
    current = await project([{ steps: [{ text: `One. ${'more '.repeat(300)}` }] }, { steps: [{ text: 'Two.' }] }, refused], { contextWindow: 8_000 })
    const chat = terminal(current.dir)
    await expect.poll(chat.screen).toContain('> ')
    await chat.turn('first', 'One.')
    await chat.turn('second', 'Two.')
    chat.type('/compact\r')
    await expect.poll(chat.screen).toContain('not compacted: the summary failed (AUTH: ')
    expect(chat.screen()).toContain('Incorrect API key provided')
    expect(chat.screen()).not.toContain('[compacted]')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  })

  it('compacts there and then, says what it did, and is never sent to the model', async () => {
    const summary: MockReply = { steps: [{ text: '## Goal\nChat.\n## Decisions\nNone.\n## Open tasks\nNone.\n## Notes\nNone.' }] }
    // A first answer long enough that the summary is shorter than what it replaces (else it is not written).
    current = await project([{ steps: [{ text: `One. ${'more '.repeat(300)}` }] }, { steps: [{ text: 'Two.' }] }, summary, { steps: [{ text: 'Three.' }] }], { contextWindow: 8_000 })
    const chat = terminal(current.dir)
    await expect.poll(chat.screen).toContain('> ')
    await chat.turn('first', 'One.')
    await chat.turn('second', 'Two.')
    chat.type('/compact keep the numbers\r')
    await expect.poll(chat.screen).toContain('[compacted] summarized the earlier conversation')
    await expect.poll(() => chat.screen().split('> ').length).toBe(5)
    chat.type('third\r')
    await expect.poll(chat.answer).toContain('Three.')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
    const requests = current.server.requests.map((request) => JSON.stringify(request.body))
    expect(requests[2]).toContain('keep the numbers')
    expect(requests.some((body) => body.includes('"/compact'))).toBe(false)
    expect(requests[3]).toContain('A summary of the conversation before this point')
  })
})

describe('rein chat: a plugin\'s log line while the prompt waits', () => {
  it('is written above the prompt, which is shown again with what was typed, not glued onto the half-typed line', async () => {
    current = await project([{ steps: [{ text: 'Answer.' }] }], { extraRows: ['- id: probe', `  name: '${join(FIXTURES, 'logs-on-demand.ts')}'`] })
    const chat = terminal(current.dir)
    await expect.poll(chat.screen).toContain('> ')
    chat.type('half')
    const plain = () => shownText(chat.screen())
    await expect.poll(plain).toMatch(/> half$/)
    ;(globalThis as { pluginWarns?: (text: string) => void }).pluginWarns?.('export failed: nothing listens there')
    await expect.poll(plain).toMatch(/\n\[warn\] probe: export failed: nothing listens there\n> half$/)
    chat.type(' done\r')
    await expect.poll(chat.answer).toContain('Answer.')
    expect(JSON.stringify(current.server.requests[0]!.body)).toContain('half done')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  }, 20_000)
})
