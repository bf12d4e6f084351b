/**
 * `rein chat` and the cordis.yml it watches, on a pretend terminal: an edit of the rows the chat's
 * session lives in is refused, a turn that cannot start leaves the chat running, a symlinked file
 * is watched where it lives, a save's notice never lands on a question's line, and a row that
 * fails to start is reported once.
 */

import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { JsonlSessionStore } from '@rein/session-jsonl'
import { startMockOpenAiServer, type MockReply } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { chatTerminal as terminal, FIXTURES, project, shownText, type Project } from './harness.ts'

let current: Project | undefined
afterEach(async () => {
  await current?.cleanup()
  current = undefined
})

const deadline = { timeout: 15_000 }
const answers = (_request: unknown, index: number): MockReply => ({ steps: [{ text: `Answer ${index + 1}.` }] })
const STORE_ROW = "- id: store\n  name: '@rein/session-jsonl'"
const REFUSED = 'cordis.yml was not applied; the rows keep running as they were: '

/** `text` with `from` replaced, which must be in it. */
function replaced(text: string, from: string, to: string): string {
  expect(text).toContain(from)
  return text.replace(from, to)
}

/** The text of each user message of a stored session, in order. */
async function userTexts(root: string, id: string): Promise<string[]> {
  const { events } = await new JsonlSessionStore({ root }).load(id)
  const messages = events.filter((event) => event.type === 'user/message').map((event) => (event.data as { message: { content: { text?: string }[] } }).message)
  return messages.map((message) => message.content.map((block) => block.text ?? '').join(''))
}

const sessionId = (screen: string) => /session (\S+) · /.exec(screen)?.[1] ?? ''

describe('rein chat: a turn that cannot start', () => {
  it('keeps the chat going and says each line typed was not sent, when the session cannot be opened again', async () => {
    const p = current = await project([{ steps: [{ toolCall: { id: 'u1', name: 'unplug', arguments: '{}' } }] }])
    const file = join(p.dir, 'cordis.yml')
    // The session store is one whose tool takes it away, as a store that lost its disk would go.
    writeFileSync(file, replaced(readFileSync(file, 'utf8'), STORE_ROW, `- id: store\n  name: '${join(FIXTURES, 'unplug-store.ts')}'`))
    const chat = terminal(p.dir)
    await expect.poll(chat.screen).toContain('> ')
    chat.type('unplug the store\r')
    await expect.poll(() => chat.screen().split('> ').length, deadline).toBe(3)
    // Typed one after the other: neither can start, and neither ends the chat.
    chat.type('are you there?\rhello?\r')
    await expect.poll(chat.screen, deadline).toContain('your message was not sent to the model nor saved in the session: hello?')
    const screen = chat.screen()
    expect(screen).toContain('not sent: NO_SESSION_STORE: no session store is loaded; add @rein/session-jsonl to cordis.yml\n')
    expect(screen).toContain('your message was not sent to the model nor saved in the session: are you there?\n')
    expect(screen).not.toContain('rein: ')
    await expect.poll(() => chat.screen().split('> ').length).toBe(5)
    chat.type('\u0004')
    // The last line typed went nowhere: the chat ends as a failed turn would.
    expect(await chat.done).toBe(1)
    expect(p.server.requests).toHaveLength(1)
    expect(await userTexts(join(p.home, 'sessions'), sessionId(screen))).toEqual(['unplug the store'])
  }, 60_000)
})

describe('rein chat: an edit of the rows its session lives in', () => {
  it('refuses changing or removing the session and store rows, keeps the session where it was, and still applies other edits', async () => {
    const p = current = await project(answers)
    const file = join(p.dir, 'cordis.yml')
    const original = readFileSync(file, 'utf8')
    const root = join(p.home, 'sessions')
    const chat = terminal(p.dir)
    await expect.poll(chat.screen).toContain('> ')
    await chat.turn('hello', 'Answer 1.')

    // Another root: the session would be looked for where it is not.
    writeFileSync(file, replaced(original, `root: '${root}'`, `root: '${join(p.dir, 'elsewhere')}'`))
    await expect.poll(chat.screen, deadline).toContain(`${REFUSED}this chat's session lives in row "store", which the edit changes; to use the edit, leave this chat (Ctrl-D) and start a new one`)
    await chat.turn('still here?', 'Answer 2.')

    writeFileSync(file, replaced(original, `- id: sessions\n  name: '@rein/session'\n${STORE_ROW}\n  config: { root: '${root}' }\n`, ''))
    await expect.poll(chat.screen, deadline).toContain(`${REFUSED}this chat's session lives in rows "sessions" and "store", which the edit removes;`)
    await chat.turn('and now?', 'Answer 3.')

    // The same store under another id: a row removed and one added.
    const renamed = replaced(original, '- id: store\n', '- id: disk\n')
    writeFileSync(file, replaced(renamed, 'label: mock,', "label: mock, headers: { X-Edited: 'yes' },"))
    await expect.poll(chat.screen, deadline).toContain(`${REFUSED}this chat's session lives in row "store", which the edit removes;`)
    await chat.turn('one more', 'Answer 4.')
    // Refused as a whole: the row the session does not live in did not change either.
    expect(p.server.requests[3]!.headers['x-edited']).toBeUndefined()

    writeFileSync(file, replaced(original, 'label: mock,', "label: mock, headers: { X-Edited: 'yes' },"))
    await expect.poll(chat.screen, deadline).toContain('cordis.yml reloaded, in effect from the next turn: changed model')
    await chat.turn('last', 'Answer 5.')
    expect(p.server.requests[4]!.headers['x-edited']).toBe('yes')

    chat.type('\u0004')
    expect(await chat.done).toBe(0)
    expect(await userTexts(root, sessionId(chat.screen()))).toEqual(['hello', 'still here?', 'and now?', 'one more', 'last'])
  }, 60_000)

  it('finds those rows by what they do, under any id, and the group they sit in', async () => {
    const p = current = await project(answers)
    const file = join(p.dir, 'cordis.yml')
    const root = join(p.home, 'sessions')
    const group = [
      '- id: keeping',
      `  name: '${join(FIXTURES, 'group.ts')}'`,
      '  group: true',
      '  config:',
      '    - id: log',
      "      name: '@rein/session'",
      '    - id: disk',
      `      name: '${join(FIXTURES, 'unplug-store.ts')}'`,
      `      config: { root: '${root}' }`,
      '',
    ].join('\n')
    const original = replaced(readFileSync(file, 'utf8'), `- id: sessions\n  name: '@rein/session'\n${STORE_ROW}\n  config: { root: '${root}' }\n`, group)
    writeFileSync(file, original)
    const chat = terminal(p.dir)
    await expect.poll(chat.screen).toContain('> ')
    await chat.turn('hello', 'Answer 1.')

    writeFileSync(file, replaced(original, `config: { root: '${root}' }`, `config: { root: '${join(p.dir, 'elsewhere')}' }`))
    await expect.poll(chat.screen, deadline).toContain(`${REFUSED}this chat's session lives in row "disk", which the edit changes;`)
    writeFileSync(file, replaced(original, '  group: true\n', '  group: true\n  disabled: true\n'))
    await expect.poll(chat.screen, deadline).toContain(`${REFUSED}this chat's session lives in row "keeping", which the edit changes;`)
    // Out of the group, the same rows are other rows to the loader: the session's store would restart.
    const store = `- id: log\n  name: '@rein/session'\n- id: disk\n  name: '${join(FIXTURES, 'unplug-store.ts')}'\n  config: { root: '${root}' }\n`
    writeFileSync(file, replaced(original, group, store))
    await expect.poll(chat.screen, deadline).toContain(`${REFUSED}this chat's session lives in rows "log" and "disk", which the edit changes, and row "keeping", which the edit removes;`)
    await chat.turn('still here?', 'Answer 2.')

    writeFileSync(file, replaced(original, 'label: mock,', "label: mock, headers: { X-Edited: 'yes' },"))
    await expect.poll(chat.screen, deadline).toContain('cordis.yml reloaded, in effect from the next turn: changed model')
    await chat.turn('last', 'Answer 3.')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
    expect(await userTexts(root, sessionId(chat.screen()))).toEqual(['hello', 'still here?', 'last'])
  }, 60_000)
})

describe('rein chat: an edit of the members of the group its session lives in', () => {
  it('applies a row added to the group and the members reordered, and still refuses a changed store member', async () => {
    const p = current = await project(answers)
    const file = join(p.dir, 'cordis.yml')
    const root = join(p.home, 'sessions')
    const rows = `- id: tools\n  name: '@rein/tools'\n- id: sessions\n  name: '@rein/session'\n${STORE_ROW}\n  config: { root: '${root}' }\n`
    const members = (...ids: string[]) => ids.map((id) => memberRows(root)[id]).join('')
    const group = (...ids: string[]) => `- id: core\n  name: '${join(FIXTURES, 'group.ts')}'\n  group: true\n  config:\n${members(...ids)}`
    const original = replaced(readFileSync(file, 'utf8'), rows, group('tools', 'sessions', 'store'))
    writeFileSync(file, original)
    const chat = terminal(p.dir)
    await expect.poll(chat.screen).toContain('> ')
    await chat.turn('hello', 'Answer 1.')

    // The members' list is not a field of the group: the rows already there keep running.
    writeFileSync(file, replaced(original, group('tools', 'sessions', 'store'), group('tools', 'fs', 'sessions', 'store')))
    await expect.poll(chat.screen, deadline).toMatch(/cordis\.yml reloaded, in effect from the next turn: .*added fs/)
    writeFileSync(file, replaced(original, group('tools', 'sessions', 'store'), group('sessions', 'tools', 'store')))
    await expect.poll(() => chat.screen().split('cordis.yml reloaded, in effect from the next turn: ').length, deadline).toBe(3)
    writeFileSync(file, replaced(original, `config: { root: '${root}' }`, `config: { root: '${join(p.dir, 'elsewhere')}' }`))
    await expect.poll(chat.screen, deadline).toContain(`${REFUSED}this chat's session lives in row "store", which the edit changes;`)
    await chat.turn('still here?', 'Answer 2.')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
    expect(chat.screen()).not.toContain('lives in row "core"')
    expect(await userTexts(root, sessionId(chat.screen()))).toEqual(['hello', 'still here?'])
  }, 60_000)
})

/** The rows a test puts in a group, by id, indented as its members. */
function memberRows(root: string): Record<string, string> {
  return {
    tools: "    - id: tools\n      name: '@rein/tools'\n",
    fs: "    - id: fs\n      name: '@rein/tool-fs'\n",
    sessions: "    - id: sessions\n      name: '@rein/session'\n",
    store: `    - id: store\n      name: '@rein/session-jsonl'\n      config: { root: '${root}' }\n`,
  }
}

describe('rein chat: a symlinked cordis.yml', () => {
  it('reloads when the file the link points to is saved, and when the link is pointed at another file', async () => {
    const p = current = await project(answers)
    const file = join(p.dir, 'cordis.yml')
    const original = readFileSync(file, 'utf8')
    // The file lives with the user's dotfiles; the project has a link to it.
    mkdirSync(join(p.dir, 'dotfiles'))
    mkdirSync(join(p.dir, 'other'))
    const target = join(p.dir, 'dotfiles', 'cordis.yml')
    renameSync(file, target)
    symlinkSync(target, file)
    const chat = terminal(p.dir)
    await expect.poll(chat.screen).toContain('> ')

    writeFileSync(target, replaced(original, 'label: mock,', "label: mock, headers: { X-Edited: 'one' },"))
    await expect.poll(chat.screen, deadline).toContain('cordis.yml reloaded, in effect from the next turn: changed model')
    await chat.turn('hello', 'Answer 1.')
    expect(p.server.requests[0]!.headers['x-edited']).toBe('one')

    // The link replaced by one to a file in another folder, as a dotfiles manager does it.
    const other = join(p.dir, 'other', 'cordis.yml')
    writeFileSync(other, replaced(original, 'label: mock,', "label: mock, headers: { X-Edited: 'two' },"))
    symlinkSync(other, `${file}.new`)
    renameSync(`${file}.new`, file)
    await expect.poll(() => chat.screen().split('changed model').length, deadline).toBe(3)
    await chat.turn('again', 'Answer 2.')
    expect(p.server.requests[1]!.headers['x-edited']).toBe('two')

    // That file is watched now too.
    writeFileSync(other, replaced(original, 'label: mock,', "label: mock, headers: { X-Edited: 'three' },"))
    await expect.poll(() => chat.screen().split('changed model').length, deadline).toBe(4)
    await chat.turn('last', 'Answer 3.')
    expect(p.server.requests[2]!.headers['x-edited']).toBe('three')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  }, 60_000)
})

/** A chat on a new project that has answered "hello", and its cordis.yml as written. */
async function chatAfterHello() {
  const p = current = await project(answers)
  const file = join(p.dir, 'cordis.yml')
  const original = readFileSync(file, 'utf8')
  const chat = terminal(p.dir)
  await expect.poll(chat.screen).toContain('> ')
  await chat.turn('hello', 'Answer 1.')
  return { file, original, chat }
}

describe('rein chat: an edit that removes the @rein/agent row', () => {
  it('says this chat goes on but rein refuses the file for a new session, and the chat does go on', async () => {
    const { file, original, chat } = await chatAfterHello()
    writeFileSync(file, original.replace(/- id: agents\n(?: {2}.*\n)*/, ''))
    await expect.poll(chat.screen, deadline).toContain('cordis.yml reloaded, in effect from the next turn: removed agents')
    expect(chat.screen()).toContain('no @rein/agent row is loaded now: this chat goes on with its agent, but a new rein run or rein chat refuses this file')
    await chat.turn('still here?', 'Answer 2.')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  }, 60_000)
})

describe('rein chat: an edit that takes away the provider its session talks to', () => {
  it('says at once that this chat\'s route is no longer served and what to do, and the chat works again once the row is back', async () => {
    const { file, original, chat } = await chatAfterHello()
    // The provider renamed, and the agents row pointed at it: a swap to another provider.
    const swapped = replaced(replaced(original, 'provider: mock, label: mock,', 'provider: other, label: other,'), '"provider":"mock"', '"provider":"other"')
    writeFileSync(file, swapped)
    await expect.poll(chat.screen, deadline).toContain('cordis.yml reloaded, in effect from the next turn: changed model, agents')
    expect(chat.screen()).toContain('this chat talks to mock/mock-model, which no loaded provider serves now (loaded: other): its turns fail until that provider\'s row is back; to use the new route, leave this chat (Ctrl-D) and start a new one')
    writeFileSync(file, original)
    await expect.poll(() => chat.screen().split('cordis.yml reloaded').length, deadline).toBe(3)
    await chat.turn('still here?', 'Answer 2.')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  }, 60_000)
})

describe('rein chat: a save while a question or the prompt waits', () => {
  const plain = shownText

  it('writes the notice on a line of its own above an approval question, then asks it again with the answer half typed', async () => {
    const note: MockReply = { steps: [{ toolCall: { id: 'n1', name: 'note', arguments: '{"text":"kept"}' } }] }
    const p = current = await project([note, { steps: [{ text: 'Noted.' }] }, { steps: [{ text: 'Answer 3.' }] }])
    const file = join(p.dir, 'cordis.yml')
    const question = 'allow note (writes a file)? [y]es / [n]o / [a]lways for this session '
    const chat = terminal(p.dir)
    await expect.poll(chat.screen).toContain('> ')
    chat.type('take a note\r')
    await expect.poll(chat.screen).toContain(question)
    chat.type('y')
    await expect.poll(() => plain(chat.screen())).toContain(`${question}y`)
    writeFileSync(file, replaced(readFileSync(file, 'utf8'), 'label: mock,', "label: mock, headers: { X-Edited: 'yes' },"))
    await expect.poll(chat.screen, deadline).toContain('cordis.yml saved; it is applied when the running turn ends')
    // The question comes back below the notice, with what was typed of the answer.
    await expect.poll(() => plain(chat.screen()), deadline).toMatch(/\ncordis\.yml saved; it is applied when the running turn ends\nallow note \(writes a file\)\? \[y\]es \/ \[n\]o \/ \[a\]lways for this session y$/)
    chat.type('\r')
    await expect.poll(chat.answer).toContain('Noted.')
    expect(readFileSync(join(p.dir, 'notes.txt'), 'utf8')).toBe('kept\n')
    await expect.poll(chat.screen, deadline).toContain('cordis.yml reloaded, in effect from the next turn: changed model')

    // At the prompt, the same: the notice above, the half-typed line kept.
    chat.type('half')
    writeFileSync(file, replaced(readFileSync(file, 'utf8'), "X-Edited: 'yes'", "X-Edited: 'again'"))
    await expect.poll(() => plain(chat.screen()).split('changed model').length, deadline).toBe(3)
    await expect.poll(() => plain(chat.screen()), deadline).toMatch(/\ncordis\.yml reloaded, in effect from the next turn: changed model\n> half$/)
    chat.type(' done\r')
    await expect.poll(chat.answer).toContain('Answer 3.')
    const users = (p.server.requests[2]!.body as { messages: { role: string; content: unknown }[] }).messages.filter((message) => message.role === 'user')
    expect(users.at(-1)?.content).toBe('half done')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  }, 60_000)
})

describe('rein chat: a notice above a half-typed line that wraps', () => {
  it('is not erased when readline redraws the prompt, and the line comes back whole below it', async () => {
    const p = current = await project(answers)
    const file = join(p.dir, 'cordis.yml')
    const chat = terminal(p.dir)
    await expect.poll(chat.screen).toContain('> ')
    // Typed one key at a time, as a person does: readline redraws as the line wraps (80 columns).
    const typed = '0123456789'.repeat(17)
    for (const key of typed) {
      chat.type(key)
      await new Promise((resolve) => setImmediate(resolve))
    }
    await expect.poll(() => rendered(chat.screen(), 80).join('')).toContain(typed)
    writeFileSync(file, replaced(readFileSync(file, 'utf8'), 'label: mock,', "label: mock, headers: { X-Edited: 'yes' },"))
    const notice = 'cordis.yml reloaded, in effect from the next turn: changed model'
    await expect.poll(() => rendered(chat.screen(), 80).join('\n'), deadline).toContain(notice)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const rows = rendered(chat.screen(), 80)
    const at = rows.indexOf(notice)
    expect(at).toBeGreaterThan(0)
    expect(rows.slice(at + 1).join('')).toBe(`> ${typed}`)
    chat.type('\u0015\u0004')
    expect(await chat.done).toBe(0)
  }, 60_000)
})

/**
 * The rows a terminal `columns` wide shows for `bytes`, as far as readline's output needs: text
 * that wraps, CR, LF, cursor up/down/column, and erase below.
 */
function rendered(bytes: string, columns: number): string[] {
  const ESC = String.fromCharCode(0x1b)
  const rows: string[][] = [[]]
  let x = 0
  let y = 0
  let wrap = false
  const row = (at: number) => (rows[at] ??= [])
  for (const token of bytes.match(new RegExp(`${ESC}\\[\\d*[A-Za-z]|[^]`, 'g')) ?? []) {
    const csi = new RegExp(`^${ESC}\\[(\\d*)([A-Za-z])$`).exec(token)
    if (csi) {
      const n = Number(csi[1] || '1')
      if (csi[2] === 'A') y = Math.max(0, y - n)
      if (csi[2] === 'B') y += n
      if (csi[2] === 'G') x = n - 1
      if (csi[2] === 'J') {
        rows.splice(y + 1)
        row(y).length = Math.min(row(y).length, x)
      }
      wrap = false
    } else if (token === '\r') {
      x = 0
      wrap = false
    } else if (token === '\n') {
      y += 1
      wrap = false
    } else {
      if (wrap) [x, y, wrap] = [0, y + 1, false]
      while (row(y).length < x) row(y).push(' ')
      row(y)[x] = token
      if (x === columns - 1) wrap = true
      else x += 1
    }
  }
  return Array.from(rows, (cells) => (cells ?? []).join('').trimEnd())
}

describe('rein chat: an edit whose row fails to start', () => {
  it('says so once, in the refusal, with no separate [error] line', async () => {
    const p = current = await project(answers)
    const file = join(p.dir, 'cordis.yml')
    const chat = terminal(p.dir)
    await expect.poll(chat.screen).toContain('> ')
    writeFileSync(file, `${readFileSync(file, 'utf8')}- id: t\n  name: '${join(FIXTURES, 'bad-schema.mjs')}'\n`)
    await expect.poll(chat.screen, deadline).toContain(`${REFUSED}CONFIG_INVALID: ${file} has a problem:`)
    await chat.turn('hello', 'Answer 1.')
    expect(chat.screen()).toContain(`row "t" (${join(FIXTURES, 'bad-schema.mjs')}): failed to start: tool "bad_schema": parameters: $.properties.text: unknown key "requird" (did you mean "required"?)`)
    expect(chat.screen()).not.toContain('[error]')
    expect(chat.screen().split('unknown key "requird"').length).toBe(2)
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  }, 60_000)
})


describe('rein chat: an approval row added while the chat runs', () => {
  it('is refused in rein\'s words, naming the row, why and what to do, not in cordis\'s "service "approval" has been registered"', async () => {
    const { file, original, chat } = await chatAfterHello()
    writeFileSync(file, `${original}- id: approval\n  name: '@rein/tools/approval'\n  config: { allow: [write] }\n`)
    await expect.poll(chat.screen, deadline).toContain(REFUSED)
    const id = sessionId(chat.screen())
    expect(chat.screen()).toContain(`${REFUSED}CONFIG_INVALID: ${file} has a problem:\n  - row "approval" (@rein/tools/approval): cannot be added while this chat runs: the chat answers approvals itself (its prompt), and no row can take that over from a running chat; to use the row, leave this chat (Ctrl-D) and continue it with rein chat --session ${id}\n`)
    expect(chat.screen()).not.toContain('has been registered')
    await chat.turn('still here?', 'Answer 2.')
    chat.type('\u0004')
    expect(await chat.done).toBe(0)
  }, 60_000)
})

describe('rein chat --verbose: an edit that moves the route to another base URL', () => {
  it('names the new base URL after the reload, not only the old one it said at the start', async () => {
    const p = current = await project(answers)
    const other = await startMockOpenAiServer(answers)
    try {
      const file = join(p.dir, 'cordis.yml')
      const chat = terminal(p.dir, ['--verbose'])
      await expect.poll(chat.screen).toContain('> ')
      expect(chat.screen()).toContain(`provider mock (mock at ${p.server.url}) · model mock-model\n`)
      await chat.turn('hello', 'Answer 1.')
      writeFileSync(file, replaced(readFileSync(file, 'utf8'), `baseURL: '${p.server.url}'`, `baseURL: '${other.url}'`))
      await expect.poll(chat.screen, deadline).toContain('cordis.yml reloaded, in effect from the next turn: changed model')
      await expect.poll(chat.screen, deadline).toContain(`the route is now provider mock (mock at ${other.url}) · model mock-model\n`)
      await chat.turn('moved?', 'Answer 1.')
      expect(other.requests).toHaveLength(1)
      // An edit that leaves the route where it is says nothing more about it.
      writeFileSync(file, replaced(readFileSync(file, 'utf8'), 'label: mock,', "label: mock, headers: { X-Edited: 'yes' },"))
      await expect.poll(() => chat.screen().split('changed model').length, deadline).toBe(3)
      await chat.turn('again', 'Answer 2.')
      expect(chat.screen().split('the route is now').length).toBe(2)
      chat.type('\u0004')
      expect(await chat.done).toBe(0)
    } finally {
      await other.close()
    }
  }, 60_000)
})
