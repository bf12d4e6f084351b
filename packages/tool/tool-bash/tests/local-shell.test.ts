// The local executor with real processes: exits, start failures, the environment, timeouts,
// cancellation, stray processes (`&`, setsid, nohup) and disposal — checked by listing processes.
import { spawn } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import { isReinError } from '@rein/base'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { LocalShell, MARKER_VARIABLE, type LocalShellConfig, type ShellProcess, type ShellRequest, type ShellStream } from '../src/index.ts'
import { livingWith, uniqueTag, waitFor } from './processes.ts'

let dir: string
const fibers: { dispose(): unknown }[] = []

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'rein-shell-')))
})
afterEach(async () => {
  for (const fiber of fibers.splice(0).reverse()) await fiber.dispose()
  rmSync(dir, { recursive: true, force: true })
})

async function boot(config: Partial<LocalShellConfig> = {}) {
  const root = new Context()
  const fiber = await root.plugin(LocalShell, { killGraceMs: 200, ...config })
  fibers.push(fiber)
  return { shell: root.shell, fiber }
}

/** A request that records its output and process; `when` runs on each chunk. */
function request(command: string, options: Partial<ShellRequest> & { when?: (all: string) => void } = {}) {
  const chunks: { stream: ShellStream; text: string }[] = []
  const started: ShellProcess[] = []
  const { when, ...rest } = options
  const made: ShellRequest = {
    command,
    cwd: dir,
    signal: new AbortController().signal,
    onOutput: (chunk, stream) => {
      chunks.push({ stream, text: Buffer.from(chunk).toString() })
      when?.(chunks.map((c) => c.text).join(''))
    },
    onStart: (process) => started.push(process),
    ...rest,
  }
  return { request: made, chunks, started, out: (stream: ShellStream) => chunks.filter((c) => c.stream === stream).map((c) => c.text).join('') }
}

describe('the local executor', () => {
  it('runs bash -c in the given directory and passes stdout and stderr on apart', async () => {
    const { shell } = await boot()
    const r = request('pwd; echo oops >&2; echo "$0"')
    const exit = await shell.run(r.request)
    expect(exit).toEqual({ exitCode: 0, signal: null, timedOut: false, cancelled: false, leftovers: 0 })
    expect(r.out('stdout')).toBe(`${dir}\nbash\n`)
    expect(r.out('stderr')).toBe('oops\n')
  })

  it('reports a non-zero exit as an exit, not a rejection', async () => {
    const { shell } = await boot()
    await expect(shell.run(request('exit 7').request)).resolves.toMatchObject({ exitCode: 7, signal: null })
  })

  it('rejects with SHELL_START_FAILED when the shell cannot be started', async () => {
    const { shell } = await boot({ shell: join(dir, 'no-such-shell') })
    const error = await shell.run(request('true').request).catch((caught: unknown) => caught)
    expect(isReinError(error, 'SHELL_START_FAILED')).toBe(true)
  })

  it('rejects with SHELL_START_FAILED when the directory does not exist', async () => {
    const { shell } = await boot()
    const error = await shell.run(request('true', { cwd: join(dir, 'gone') }).request).catch((caught: unknown) => caught)
    expect(isReinError(error, 'SHELL_START_FAILED')).toBe(true)
  })

  it.each([
    ['over the 128 KiB the system takes for one argument', `echo ${'x'.repeat(200_000)}`, /too long/],
    ['holding a NUL byte', 'echo a\0b', /NUL/],
  ])('rejects with SHELL_START_FAILED, saying why, a command %s', async (_case, command, why) => {
    const { shell } = await boot()
    const error = await shell.run(request(command).request).catch((caught: unknown) => caught)
    expect(isReinError(error, 'SHELL_START_FAILED')).toBe(true)
    expect((error as Error).message).toMatch(why)
  })

  it('runs the command as the leader of its own process group and session', async () => {
    const { shell } = await boot()
    const r = request('read -r _ _ _ _ group session _ < /proc/$$/stat; echo "$$ $group $session"')
    await shell.run(r.request)
    const pid = r.started[0]!.pid
    expect(r.out('stdout')).toBe(`${pid} ${pid} ${pid}\n`)
    expect(r.started[0]).toMatchObject({ pid, processGroup: pid })
  })

  it('gives the command a scrubbed environment with the fixed values and its marker', async () => {
    process.env.REIN_TEST_SECRET = 'sk-should-not-leak'
    process.env.REIN_TEST_PASSED = 'passed'
    try {
      const { shell } = await boot({ passEnv: ['REIN_TEST_PASSED'], env: { EXTRA: 'x', PAGER: 'less' } })
      const r = request('env')
      await shell.run(r.request)
      const env = Object.fromEntries(r.out('stdout').trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]))
      expect(r.out('stdout')).not.toContain('sk-should-not-leak')
      expect(env).toMatchObject({
        NO_COLOR: '1', TERM: 'dumb', PAGER: 'less', GIT_PAGER: 'cat', MANPAGER: 'cat', GIT_TERMINAL_PROMPT: '0', GIT_EDITOR: 'false', EDITOR: 'false', VISUAL: 'false',
        EXTRA: 'x', REIN_TEST_PASSED: 'passed', REIN_BASH_CALL: r.started[0]!.marker, PATH: process.env.PATH,
      })
      expect(env.NODE_OPTIONS).toBeUndefined()
    } finally {
      delete process.env.REIN_TEST_SECRET
      delete process.env.REIN_TEST_PASSED
    }
  })

  it('uses the marker the caller gives, so it can be recorded before the command starts', async () => {
    const { shell } = await boot()
    const r = request('echo "$REIN_BASH_CALL"', { marker: 'recorded-marker' })
    await shell.run(r.request)
    expect(r.out('stdout')).toBe('recorded-marker\n')
    expect(r.started[0]!.marker).toBe('recorded-marker')
  })

  it('never calls the consumer again while its promise is pending, and loses nothing', async () => {
    const { shell } = await boot()
    // A chunk read before a pause takes hold is the race: several runs make it likely to show.
    for (let run = 0; run < 5; run++) {
      let pending = 0
      let overlapped = false
      let bytes = 0
      const exit = await shell.run({
        command: 'head -c 5000000 /dev/zero; head -c 1000000 /dev/zero >&2',
        cwd: dir,
        signal: new AbortController().signal,
        onOutput: (chunk) => {
          if (pending > 0) overlapped = true
          pending++
          bytes += chunk.byteLength
          return new Promise<void>((resolve) => setImmediate(() => {
            pending--
            resolve()
          }))
        },
      })
      expect(exit.exitCode).toBe(0)
      expect(overlapped).toBe(false)
      expect(bytes).toBe(6_000_000)
    }
  })
})

describe('stopping a command', () => {
  it('stops a command at its timeout with SIGTERM and says so', async () => {
    const { shell } = await boot()
    const tag = uniqueTag()
    const exit = await shell.run(request(`sleep ${tag}`, { timeoutMs: 200 }).request)
    expect(exit).toMatchObject({ timedOut: true, cancelled: false, exitCode: null, signal: 'SIGTERM' })
    expect(livingWith(tag)).toEqual([])
  })

  it('sends SIGKILL after the grace period to a shell that ignores SIGTERM', async () => {
    const { shell } = await boot()
    const tag = uniqueTag()
    const exit = await shell.run(request(`trap '' TERM; sleep ${tag}; echo survived`, { timeoutMs: 200 }).request)
    expect(exit).toMatchObject({ timedOut: true, signal: 'SIGKILL' })
    expect(livingWith(tag)).toEqual([])
  })

  it('kills a child that ignores SIGTERM after the shell itself has gone', async () => {
    const { shell } = await boot()
    const tag = uniqueTag()
    const exit = await shell.run(request(`(trap '' TERM; sleep ${tag}) & wait`, { timeoutMs: 200 }).request)
    expect(exit).toMatchObject({ timedOut: true, signal: 'SIGTERM' })
    expect(livingWith(tag)).toEqual([])
  })

  it('stops a command when its signal aborts, and says it was cancelled', async () => {
    const { shell } = await boot()
    const tag = uniqueTag()
    const controller = new AbortController()
    const r = request(`echo ready; sleep ${tag}`, { signal: controller.signal, when: (all) => all.includes('ready') && controller.abort() })
    const exit = await shell.run(r.request)
    expect(exit).toMatchObject({ cancelled: true, timedOut: false, signal: 'SIGTERM' })
    expect(livingWith(tag)).toEqual([])
  })

  it('stops a command whose signal aborts while the shell is still starting, instead of missing the abort', async () => {
    const { shell } = await boot()
    const tag = uniqueTag()
    const controller = new AbortController()
    // No timeout: a missed abort would leave it running until the test's own limit.
    const running = shell.run(request(`sleep ${tag}`, { signal: controller.signal }).request)
    // The process exists now; its 'spawn' event has not fired yet.
    controller.abort()
    expect(await running).toMatchObject({ cancelled: true, timedOut: false })
    expect(livingWith(tag)).toEqual([])
  }, 10_000)

  it('stops a command that is still starting when the executor is disposed', async () => {
    const { shell, fiber } = await boot()
    const tag = uniqueTag()
    const running = shell.run(request(`sleep ${tag}`).request)
    await fiber.dispose()
    expect(await running).toMatchObject({ cancelled: true })
    expect(livingWith(tag)).toEqual([])
  }, 10_000)

  it('does not start a command whose signal is already aborted', async () => {
    const { shell } = await boot()
    const r = request('echo ran', { signal: AbortSignal.abort() })
    await expect(shell.run(r.request)).resolves.toMatchObject({ cancelled: true, exitCode: null })
    expect(r.started).toEqual([])
  })

  it('ends the call even when a process it cannot find keeps the output pipe open', async () => {
    const { shell } = await boot()
    const tag = uniqueTag()
    // Out of the session, out of the environment, reparented: nothing links it to the command.
    const exit = await shell.run(request(`setsid env -i sleep ${tag} & echo left`).request)
    expect(exit.exitCode).toBe(0)
    for (const pid of livingWith(tag)) process.kill(pid, 'SIGKILL')
  })
})

/** How a stray process is started: each leaves the shell's reach in a different way. */
const STRAYS = {
  'a background job (&)': (tag: string) => `sleep ${tag} &`,
  'setsid (a new session, out of the group)': (tag: string) => `setsid sleep ${tag} &`,
  'nohup (immune to SIGHUP)': (tag: string) => `nohup sleep ${tag} >/dev/null 2>&1 &`,
}

describe.each(Object.entries(STRAYS))('a grandchild started with %s', (_name, start) => {
  /** Nothing left, looked up both by the tag in its command line and by the call's marker. */
  const expectNothingLeft = (tag: string, process: ShellProcess | undefined) => {
    expect(livingWith(tag)).toEqual([])
    expect(livingWith(`${MARKER_VARIABLE}=${process?.marker}`)).toEqual([])
  }

  it('is killed when the command ends normally, and counted', async () => {
    const { shell } = await boot()
    const tag = uniqueTag()
    const r = request(`${start(tag)} echo started`)
    const exit = await shell.run(r.request)
    expect(exit).toMatchObject({ exitCode: 0, leftovers: 1 })
    expectNothingLeft(tag, r.started[0])
  })

  it('is killed when the command times out', async () => {
    const { shell } = await boot()
    const tag = uniqueTag()
    const r = request(`${start(tag)} sleep 30`, { timeoutMs: 300 })
    const exit = await shell.run(r.request)
    expect(exit.timedOut).toBe(true)
    expectNothingLeft(tag, r.started[0])
  })

  it('is killed when the command is cancelled', async () => {
    const { shell } = await boot()
    const tag = uniqueTag()
    const controller = new AbortController()
    const r = request(`${start(tag)} echo started; sleep 30`, { signal: controller.signal, when: (all) => all.includes('started') && controller.abort() })
    const exit = await shell.run(r.request)
    expect(exit.cancelled).toBe(true)
    expectNothingLeft(tag, r.started[0])
  })

  it('is killed when the executor is disposed', async () => {
    const { shell, fiber } = await boot()
    const tag = uniqueTag()
    let disposed: unknown
    const r = request(`${start(tag)} echo started; sleep 30`, { when: (all) => { if (all.includes('started')) disposed ??= fiber.dispose() } })
    const exit = await shell.run(r.request)
    await disposed
    expect(exit.cancelled).toBe(true)
    expectNothingLeft(tag, r.started[0])
  })
})

describe('reap', () => {
  it('stops what is left of a recorded command, found by its group and marker', async () => {
    const { shell } = await boot()
    const tag = uniqueTag()
    const r = request(`setsid sleep ${tag} & sleep ${tag}`, { timeoutMs: 60_000 })
    const controller = new AbortController()
    // Run it, and reap it from outside while it runs (as a resumed process would).
    const running = shell.run({ ...r.request, signal: controller.signal })
    // onStart too: a scan of /proc can see the processes before the executor has reported the start.
    await waitFor(() => r.started.length > 0 && livingWith(tag).length === 3, 'the shell and both sleeps to start')
    await expect(shell.reap!(r.started[0]!)).resolves.toBe(3)
    expect(livingWith(tag)).toEqual([])
    await running
  })

  it('leaves alone a recorded group number now used by a process without the marker', async () => {
    const { shell } = await boot()
    const tag = uniqueTag()
    // A stranger: its own group, whose number a recorded job might name after the number was reused.
    const stranger = spawn('sleep', [tag], { detached: true, stdio: 'ignore' })
    try {
      await waitFor(() => livingWith(tag).length === 1, 'the stranger to start')
      await expect(shell.reap!({ pid: stranger.pid!, processGroup: stranger.pid!, marker: 'a-marker-nobody-carries' })).resolves.toBe(0)
      expect(livingWith(tag)).toEqual([stranger.pid])
    } finally {
      stranger.kill('SIGKILL')
    }
  })
})
