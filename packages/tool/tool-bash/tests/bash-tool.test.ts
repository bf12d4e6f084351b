// The bash tool through the whole registry pipeline, with real processes: what the model reads,
// the value, long output, timeouts, cancellation, bad arguments, and the cards.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { DurableToolResult } from '@rein/tools'
import { describe, expect, it } from 'vitest'
import { bootBash, text } from './helpers.ts'
import { livingWith, uniqueTag, waitFor } from './processes.ts'

describe('the bash tool', () => {
  it('returns the output and the exit code', async () => {
    const { execute } = await bootBash()
    const result = await execute({ command: 'echo hello', description: 'Say hello' })
    expect(result).toMatchObject({
      isError: false,
      value: { output: 'hello', exitCode: 0, signal: null, timedOut: false, cancelled: false, leftovers: 0, outputPath: null, truncated: false, timeoutMs: 120_000 },
      meta: { exitCode: 0, signal: null, truncated: false, timedOut: false, cancelled: false },
    })
    expect(text(result)).toBe('hello\n[exit code: 0]')
  })

  it('reads a non-zero exit as a value, with stderr marked', async () => {
    const { execute } = await bootBash()
    const result = await execute({ command: 'echo out; echo "no such file" >&2; exit 3', description: 'Fail' })
    expect(result.isError).toBe(false)
    expect(text(result)).toMatch(/^(out\n\[stderr\] no such file|\[stderr\] no such file\nout)\n\[exit code: 3\]$/)
  })

  it('shows just the exit code for a command that prints nothing', async () => {
    const { execute } = await bootBash()
    expect(text(await execute({ command: 'true', description: 'Nothing' }))).toBe('[exit code: 0]')
  })

  it('says the command timed out and how it was killed, and leaves nothing running', async () => {
    const { execute } = await bootBash()
    const tag = uniqueTag()
    const result = await execute({ command: `echo begun; sleep ${tag}`, description: 'Hang', timeout_ms: 300 })
    expect(result.isError).toBe(false)
    expect(text(result)).toBe('begun\n[timed out after 300 ms]\n[killed by signal SIGTERM]')
    expect(livingWith(tag)).toEqual([])
  })

  it('returns the output so far, marked [cancelled], only once its processes are gone, when the call is cancelled', async () => {
    const { execute } = await bootBash()
    const tag = uniqueTag()
    const controller = new AbortController()
    // SIGTERM ignored (and inherited by sleep): only the SIGKILL after killGraceMs stops it.
    const call = execute({ command: `echo begun; trap "" TERM; sleep ${tag}`, description: 'Wait' }, controller.signal)
    await waitFor(() => livingWith(tag).length > 0, 'the command to start')
    controller.abort()
    const result = await call
    expect(livingWith(tag)).toEqual([])
    expect(result).toMatchObject({ isError: false, value: { output: 'begun', cancelled: true, signal: 'SIGKILL' } })
    expect(text(result)).toBe('begun\n[cancelled]\n[killed by signal SIGKILL]')
  })

  it('previews long output with its head, its tail and the file that holds all of it', async () => {
    const { execute } = await bootBash()
    const result = await execute({ command: 'seq 1 100000', description: 'Count' })
    const shown = text(result)
    const value = result.isError ? undefined : result.value as { outputPath: string; truncated: boolean }
    expect(value?.truncated).toBe(true)
    expect(shown.startsWith('1\n2\n3\n')).toBe(true)
    expect(shown.endsWith('99999\n100000\n[exit code: 0]')).toBe(true)
    expect(shown).toContain(`The whole output (588,895 characters, 100,000 lines) is saved at ${value?.outputPath}; if one of your tools reads files, read the part you need`)
    expect(shown.length).toBeLessThan(16_000)
    expect(readFileSync(value!.outputPath, 'utf8')).toBe(Array.from({ length: 100_000 }, (_, i) => `${i + 1}\n`).join(''))
  })

  it('stops writing the output file at maxOutputFileBytes, keeps the real tail, and says how much was not saved', async () => {
    const { execute } = await bootBash({ maxOutputFileBytes: 4096 })
    const result = await execute({ command: 'seq 1 100000', description: 'Count' })
    const shown = text(result)
    const value = result.isError ? undefined : result.value as { outputPath: string }
    const whole = Array.from({ length: 100_000 }, (_, i) => `${i + 1}\n`).join('')
    const note = `[output file capped at 4 KiB; ${(whole.length - 4096).toLocaleString('en-US')} more bytes were not saved]`
    // The first 4096 bytes end mid-line: the note starts a line of its own.
    expect(readFileSync(value?.outputPath ?? '', 'utf8')).toBe(`${whole.slice(0, 4096)}\n${note}\n`)
    expect(shown.endsWith(`99999\n100000\n${note}\n[exit code: 0]`)).toBe(true)
    expect(shown).not.toContain('The whole output')
    expect(shown).toContain(`its first 4 KiB are saved at ${value?.outputPath};`)
  })

  it('fails at once, instead of waiting for an editor until the timeout, when git commit has no message', async () => {
    const { execute } = await bootBash()
    const tag = uniqueTag()
    const repo = mkdtempSync(join(tmpdir(), 'rein-bash-git-'))
    try {
      // A configured editor that never returns, like `code --wait` in a user's ~/.gitconfig.
      const result = await execute({
        command: `git init -q . && git -c core.editor='sleep ${tag}; true' -c user.name=t -c user.email=t@example.com commit --allow-empty`,
        description: 'Commit', workdir: repo, timeout_ms: 20_000,
      }, undefined, { cwd: repo, workspaceRoot: repo })
      const shown = text(result)
      expect(shown).not.toContain('[timed out')
      expect(shown).toContain("problem with the editor 'false'")
      expect(shown.endsWith('[exit code: 1]')).toBe(true)
      expect(livingWith(tag)).toEqual([])
    } finally {
      rmSync(repo, { recursive: true, force: true })
    }
  }, 30_000)

  it.each([
    ['no command', { description: 'x' }],
    ['an empty command', { command: '', description: 'x' }],
    ['no description', { command: 'echo x' }],
    ['a timeout above the maximum', { command: 'echo x', description: 'x', timeout_ms: 600_001 }],
    ['a zero timeout', { command: 'echo x', description: 'x', timeout_ms: 0 }],
    ['run_in_background without a jobs service', { command: 'echo x', description: 'x', run_in_background: true }],
    ['an unknown argument', { command: 'echo x', description: 'x', shell: 'zsh' }],
  ])('refuses %s with INVALID_ARGS and runs nothing', async (_name, args) => {
    const { execute } = await bootBash()
    const result = await execute(args)
    expect(result.isError && result.error.code).toBe('INVALID_ARGS')
  })

  it('lets a call raise its own timeout up to the maximum in Config', async () => {
    const { execute } = await bootBash({ maxTimeoutMs: 1_000, defaultTimeoutMs: 500 })
    expect((await execute({ command: 'true', description: 'x', timeout_ms: 1_001 })).isError).toBe(true)
    expect(text(await execute({ command: 'sleep 30', description: 'x' }))).toContain('[timed out after 500 ms]')
  })

  it('writes a timeout of thousands of ms with its digits grouped, as a background job\'s status line does', async () => {
    const { execute } = await bootBash({ maxTimeoutMs: 2_000, defaultTimeoutMs: 1_200 })
    expect(text(await execute({ command: 'sleep 30', description: 'x' }))).toContain('[timed out after 1,200 ms]')
  })
})

describe('cards', () => {
  it('shows the command as a terminal card while it runs', async () => {
    const { root } = await bootBash()
    expect(root.tools.presentCall('bash', JSON.stringify({ command: 'npm test', description: 'Run the tests', workdir: 'pkg' })))
      .toEqual({ card: 'terminal', title: 'Run the tests', command: 'npm test', cwd: 'pkg' })
  })

  it('shows the output, exit code and signal from the log alone', async () => {
    const { root, execute } = await bootBash()
    const args = { command: 'echo hi; exit 2', description: 'Try' }
    const result = await execute(args)
    // As the session log keeps it: JSON, without the execution-local value.
    const durable = JSON.parse(JSON.stringify({ isError: result.isError, content: result.content, meta: result.isError ? undefined : result.meta })) as DurableToolResult
    expect(root.tools.presentResult('bash', JSON.stringify(args), durable))
      .toEqual({ card: 'terminal', title: 'Try', output: 'hi\n[exit code: 2]', exitCode: 2, signal: null, truncated: false })
    expect(root.tools.summarize('bash', JSON.stringify(args), durable)).toBe('bash `echo hi; exit 2`: exit 2')
  })

  it.each([
    ['cancelled', { command: 'echo started; sleep 30', description: 'Wait' }, true],
    ['timed-out', { command: 'echo started; sleep 30', description: 'Wait', timeout_ms: 200 }, false],
  ] as const)('says a command rein stopped was %s, from the log alone, not only the signal that ended it', async (stopped, args, cancel) => {
    const { root, execute } = await bootBash()
    const controller = new AbortController()
    const running = execute(args, controller.signal)
    if (cancel) setTimeout(() => controller.abort(), 200)
    const result = await running
    const durable = JSON.parse(JSON.stringify({ isError: result.isError, content: result.content, meta: result.isError ? undefined : result.meta })) as DurableToolResult
    expect(root.tools.presentResult('bash', JSON.stringify(args), durable)).toMatchObject({ card: 'terminal', stopped })
  })
})
