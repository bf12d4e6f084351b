/**
 * `rein chat` as a real process on a real terminal (a pty): keys that arrive together with a line's
 * Enter, a stdout whose reader went away, slash commands it does not have, and a chat that cannot start.
 */

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { onTerminal, projectPerTest, rein, reinCommand, shellQuote, terminalRein } from './harness.ts'

const setUp = projectPerTest(afterEach)
const deadline = { timeout: 20_000 }

describe('rein chat: Ctrl-C in the same keystrokes as a line\'s Enter', () => {
  it('does not send the line nor run its turn to the end, says it was not sent, and keeps the chat going', async () => {
    const p = await setUp([{ steps: [{ text: 'Answered the second.' }] }])
    const chat = terminalRein(p.dir, ['chat'])
    try {
      await expect.poll(chat.screen, deadline).toContain('Ctrl-D leaves')
      // One write: readline reads the line and the Ctrl-C from one chunk, before the turn starts.
      chat.type('first line\r\u0003')
      await expect.poll(chat.screen, deadline).toContain('your message was not sent to the model nor saved in the session: first line')
      expect(chat.screen()).toContain('not sent: CANCELLED: Ctrl-C came before the line reached the model')
      chat.type('second line\r')
      await expect.poll(chat.screen, deadline).toContain('Answered the second.')
      await expect.poll(chat.screen, deadline).toMatch(/· completed[\s\S]*> /)
      chat.type('\u0004')
      expect(await chat.done).toBe(0)
    } finally {
      chat.kill()
    }
    expect(p.server.requests).toHaveLength(1)
    expect(JSON.stringify(p.server.requests[0]!.body)).not.toContain('first line')
  }, 60_000)
})

/** `rein chat | head -c <bytes>` on a pty: the chat's stdout is a pipe whose reader leaves early; its exit code lands in `codeFile`. */
function chatIntoHead(cwd: string, bytes: number, codeFile: string) {
  const pipeline = `(${reinCommand(['chat'])}; echo $? > ${shellQuote(codeFile)}) | head -c ${bytes} > /dev/null`
  return onTerminal(cwd, `sh -c ${shellQuote(pipeline)}`)
}

describe('rein chat: stdout closed by its reader', () => {
  it('leaves the chat with exit 130 and says why, rather than going on with answers nobody reads, and keeps what was said', async () => {
    const p = await setUp([
      { steps: [{ text: 'An answer nobody reads.' }] },
      { steps: [{ text: 'Never asked for.' }] },
    ])
    const codeFile = join(p.dir, 'chat-exit-code')
    // head -c 0 reads nothing: the first answer meets a closed pipe.
    const chat = chatIntoHead(p.dir, 0, codeFile)
    try {
      await expect.poll(chat.screen, deadline).toContain('Ctrl-D leaves')
      chat.type('one\r')
      await expect.poll(chat.screen, deadline).toContain('stdout was closed, so the chat ends; what was said is saved in the session')
      await expect.poll(() => existsSync(codeFile), deadline).toBe(true)
      await chat.done
    } finally {
      chat.kill()
    }
    expect(readFileSync(codeFile, 'utf8').trim()).toBe('130')
    expect(p.server.requests).toHaveLength(1)
    const id = /session (\S+) · /.exec(chat.screen())?.[1] ?? ''
    const shown = await rein(p.dir, ['show', id])
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain('> one')
  }, 60_000)
})

describe('rein chat: a slash command it does not have', () => {
  it('does not send /help, /quit or /tmp to the model: /help lists the keys and commands, the others are refused, and a leading space sends the line as written', async () => {
    const p = await setUp([{ steps: [{ text: 'About /tmp then.' }] }])
    const chat = terminalRein(p.dir, ['chat'])
    try {
      await expect.poll(chat.screen, deadline).toContain('Ctrl-D leaves')
      chat.type('/help\r')
      await expect.poll(chat.screen, deadline).toContain('/compact [what to keep]')
      chat.type('/quit\r')
      await expect.poll(chat.screen, deadline).toContain('unknown command /quit: not sent; the chat has /compact [what to keep] and /help (Ctrl-D leaves); to send a line that starts with /, start it with a space')
      chat.type('/tmp is full\r')
      await expect.poll(chat.screen, deadline).toContain('unknown command /tmp: not sent;')
      chat.type(' /tmp is full\r')
      await expect.poll(chat.screen, deadline).toContain('About /tmp then.')
      await expect.poll(chat.screen, deadline).toMatch(/· completed[\s\S]*> /)
      chat.type('\u0004')
      expect(await chat.done).toBe(0)
    } finally {
      chat.kill()
    }
    expect(p.server.requests).toHaveLength(1)
    expect(JSON.stringify(p.server.requests[0]!.body)).toContain(' /tmp is full')
  }, 60_000)
})

/** `rein chat <args>` on a pty, for a chat that ends by itself: its exit code and what it showed. */
async function chatThatEnds(cwd: string, args: string[]): Promise<{ code: number | null; screen: string }> {
  const chat = terminalRein(cwd, ['chat', ...args])
  try {
    return { code: await chat.done, screen: chat.screen() }
  } finally {
    chat.kill()
  }
}

describe('rein chat: a session that cannot be opened', () => {
  it('says why and exits 2 at once, without claiming a tool or plugin left work running', async () => {
    const p = await setUp([])
    const { code, screen } = await chatThatEnds(p.dir, ['--session', 'no-such-session'])
    expect(code).toBe(2)
    expect(screen).toContain('rein: no session no-such-session')
    expect(screen).not.toContain('left work running')
  }, 60_000)

  it('refuses --yes beside an approval row with exit 2 at once, without claiming a tool or plugin left work running', async () => {
    const p = await setUp([], { extraRows: ['- id: approval', "  name: '@rein/tools/approval'", '  config: { allow: [write] }'] })
    const { code, screen } = await chatThatEnds(p.dir, ['--yes'])
    expect(code).toBe(2)
    expect(screen).toContain('rein: the composition has its own approval row, which answers every approval; drop --yes, or that row')
    expect(screen).not.toContain('left work running')
  }, 60_000)
})

describe('rein chat: end of input at an approval question', () => {
  it('takes Ctrl-D as a no and ends the question\'s line, so the tool\'s line does not run onto it', async () => {
    const p = await setUp([{ steps: [{ toolCall: { id: 'n1', name: 'note', arguments: '{"text":"x"}' } }] }, { steps: [{ text: 'Not noted.' }] }])
    const chat = terminalRein(p.dir, ['chat'])
    let code: number | null
    try {
      await expect.poll(chat.screen, deadline).toContain('Ctrl-D leaves')
      chat.type('take a note\r')
      await expect.poll(chat.screen, deadline).toContain('[a]lways for this session ')
      chat.type('\u0004')
      code = await chat.done
    } finally {
      chat.kill()
    }
    expect(code).toBe(0)
    expect(chat.screen()).toContain('Not noted.')
    expect(chat.screen()).toMatch(/for this session \r?\n\s*\[tool\] note .*failed DENIED/)
  }, 60_000)
})

describe('rein chat: SIGTERM at the prompt, no turn running', () => {
  it('says the chat is closing, not that a turn is interrupted, and leaves as a signal does (exit 130)', async () => {
    const p = await setUp([{ steps: [{ text: 'First answer.' }] }])
    // `exec`: the shell's pid, printed first, is rein's.
    const chat = onTerminal(p.dir, `sh -c ${shellQuote(`echo "pid $$"; exec ${reinCommand(['chat'])}`)}`)
    try {
      await expect.poll(chat.screen, deadline).toContain('Ctrl-D leaves')
      chat.type('hello\r')
      await expect.poll(chat.screen, deadline).toMatch(/First answer\.[\s\S]*· completed[\s\S]*> $/)
      process.kill(Number(/pid (\d+)/.exec(chat.screen())![1]), 'SIGTERM')
      expect(await chat.done).toBe(130)
    } finally {
      chat.kill()
    }
    const after = chat.screen().slice(chat.screen().lastIndexOf('· completed'))
    expect(after).toContain('SIGTERM: closing the chat (no turn was running')
    expect(after).not.toContain('turn is interrupted')
  }, 60_000)
})

describe('rein chat: a save it refuses to reload', () => {
  it('shows the CONFIG_INVALID code, as rein run does for the same file', async () => {
    const p = await setUp([{ steps: [{ text: 'First answer.' }] }])
    const file = join(p.dir, 'cordis.yml')
    const broken = readFileSync(file, 'utf8').replace('label: mock,', 'lable: mock,')
    const chat = terminalRein(p.dir, ['chat'])
    try {
      await expect.poll(chat.screen, deadline).toContain('Ctrl-D leaves')
      writeFileSync(file, broken)
      await expect.poll(chat.screen, deadline).toContain('cordis.yml was not applied; the rows keep running as they were: ')
      chat.type('\u0004')
      expect(await chat.done).toBe(0)
    } finally {
      chat.kill()
    }
    const run = await rein(p.dir, ['run', 'hi'])
    expect(run.code).toBe(2)
    const problem = /^rein: (CONFIG_INVALID: [^\n]*)/.exec(run.stderr)?.[1]
    expect(problem).toBeDefined()
    expect(chat.screen().replaceAll('\r', '')).toContain(`cordis.yml was not applied; the rows keep running as they were: ${problem}`)
  }, 60_000)
})

describe('rein chat: its terminal closed under it (the window shut, the ssh connection dropped)', () => {
  it('stops the running command, keeps its output and ends the turn interrupted, as SIGHUP does, rather than crashing as a plugin bug', async () => {
    const token = `61.${process.pid}`
    const p = await setUp([
      { steps: [{ toolCall: { id: 'c_long', name: 'bash', arguments: JSON.stringify({ command: `echo started; touch started; sleep ${token}`, description: 'long' }) } }] },
      { steps: [{ text: 'never' }] },
    ], { extraRows: ["- { id: jobs, name: '@rein/jobs' }", "- { id: bash, name: '@rein/tool-bash' }"] })
    const errors = join(p.dir, 'chat-stderr')
    // `script` holds the terminal: killed, its terminal closes, as a window's does.
    const chat = onTerminal(p.dir, `${reinCommand(['chat', '--yes'])} 2> ${shellQuote(errors)}`, { REIN_HOME: p.home })
    try {
      await expect.poll(() => existsSync(errors) && readFileSync(errors, 'utf8'), deadline).toContain('Ctrl-D leaves')
      chat.type('go\r')
      await expect.poll(() => existsSync(join(p.dir, 'started')), deadline).toBe(true)
      chat.kill()
      await expect.poll(() => readFileSync(errors, 'utf8'), deadline).toContain('SIGHUP')
      await expect.poll(() => sessionLog(p), deadline).toContain('"type":"turn/end"')
    } finally {
      chat.kill()
    }
    const said = readFileSync(errors, 'utf8')
    expect(said).not.toContain('setRawMode')
    expect(said).not.toContain('Assertion failed')
    const log = sessionLog(p)
    expect(log).toContain('"reason":"interrupted"')
    expect(log).toContain('started')
  }, 60_000)
})

/** The one session log the project holds. */
function sessionLog(p: { home: string }): string {
  const folder = join(p.home, 'sessions')
  const [file] = existsSync(folder) ? readdirSync(folder).filter((name) => name.endsWith('.jsonl')) : []
  return file === undefined ? '' : readFileSync(join(folder, file), 'utf8')
}
