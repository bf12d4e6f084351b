// The plugin: what it registers and takes away, the executor seam (looked up at each call),
// the schema following ctx.jobs as it comes and goes, and Config checked at load.
import { Context, Service } from '@deepseek-ai/cordis'
import { isReinError } from '@rein/base'
import { JobService } from '@rein/jobs'
import ToolRegistry from '@rein/tools'
import { describe, expect, it } from 'vitest'
import * as bash from '../src/index.ts'
import type { ShellExecutor, ShellExit, ShellRequest } from '../src/index.ts'
import { bootBash, text } from './helpers.ts'
import { livingWith, uniqueTag, waitFor } from './processes.ts'

const parameterNames = (root: Context) => Object.keys(root.tools.schemas().find((schema) => schema.name === 'bash')?.parameters.properties ?? {})

describe('the plugin', () => {
  it('registers the bash tool and ctx.shell, and takes both away when disposed', async () => {
    const { root, fiber } = await bootBash()
    expect(root.tools.list()).toEqual(['bash'])
    expect(root.get('shell')?.kind).toBe('local')
    await fiber.dispose()
    expect(root.tools.list()).toEqual([])
    expect(root.get('shell')).toBeUndefined()
  })

  it('stops a running command, and everything it started, when disposed', async () => {
    const { fiber, execute } = await bootBash()
    const tag = uniqueTag()
    const call = execute({ command: `setsid sleep ${tag} & sleep ${tag}`, description: 'Wait' })
    await waitFor(() => livingWith(tag).length === 3, 'the command to start')
    await fiber.dispose()
    expect(livingWith(tag)).toEqual([])
    // Removed mid-call, the tool hears it through its signal and answers within its cancel grace.
    expect(text(await call)).toBe('[cancelled]\n[killed by signal SIGTERM]')
  })

  it('fails to load, naming both fields, when the default timeout is above the maximum', async () => {
    const root = new Context()
    await root.plugin(ToolRegistry)
    const error = await Promise.resolve(root.plugin(bash, { defaultTimeoutMs: 5_000, maxTimeoutMs: 1_000 })).then(() => undefined, (caught: unknown) => caught)
    expect(isReinError(error, 'CONFIG_INVALID')).toBe(true)
    expect((error as Error).message).toBe('config.defaultTimeoutMs (5000) is above config.maxTimeoutMs (1000); lower the default or raise the maximum')
    expect(root.tools.list()).toEqual([])
  })
})

/** An executor another plugin could provide (a sandbox, say): records what it is asked to run. */
class RecordingShell extends Service implements ShellExecutor {
  readonly kind = 'recording'
  readonly requests: ShellRequest[] = []

  constructor(ctx: Context) {
    super(ctx, 'shell')
  }

  async run(request: ShellRequest): Promise<ShellExit> {
    this.requests.push(request)
    await request.onOutput(new TextEncoder().encode(`ran ${request.command} in ${request.cwd}\n`), 'stdout')
    return { exitCode: 0, signal: null, timedOut: false, cancelled: false, leftovers: 0 }
  }
}

describe('the executor seam', () => {
  it('says no executor is loaded when localExecutor is false and nothing provides ctx.shell', async () => {
    const { root, execute } = await bootBash({ localExecutor: false })
    expect(root.get('shell')).toBeUndefined()
    const result = await execute({ command: 'echo hi', description: 'x' })
    expect(result.isError && result.error.code).toBe('NO_SHELL_EXECUTOR')
  })

  it('runs on the executor another plugin provides, found at each call', async () => {
    const { root, execute } = await bootBash({ localExecutor: false })
    const fiber = await root.plugin(RecordingShell)
    const result = await execute({ command: 'make', description: 'Build', timeout_ms: 5_000 }, undefined, { cwd: '/work', workspaceRoot: '/work' })
    expect(text(result)).toBe('ran make in /work\n[exit code: 0]')
    expect(root.shell).toBeInstanceOf(RecordingShell)
    expect((root.shell as RecordingShell).requests.map(({ command, cwd, timeoutMs }) => ({ command, cwd, timeoutMs }))).toEqual([{ command: 'make', cwd: '/work', timeoutMs: 5_000 }])
    await fiber.dispose()
    const after = await execute({ command: 'make', description: 'Build' })
    expect(after.isError && after.error.code).toBe('NO_SHELL_EXECUTOR')
  })
})

describe('run_in_background follows ctx.jobs', () => {
  it('is offered only while the jobs service is loaded, as it comes and goes, without a duplicate name', async () => {
    const { root, fiber } = await bootBash()
    const errors: string[] = []
    root.logger.exporter({ export: (message) => { if (message.type === 'error') errors.push(String(message.args[0])) } })
    expect(parameterNames(root)).toEqual(['command', 'description', 'timeout_ms', 'workdir'])
    const jobs = await root.plugin(JobService)
    expect(parameterNames(root)).toEqual(['command', 'description', 'timeout_ms', 'workdir', 'run_in_background'])
    expect(root.tools.list()).toEqual(['bash', 'job_kill', 'job_list', 'job_output'])
    await jobs.dispose()
    expect(parameterNames(root)).toEqual(['command', 'description', 'timeout_ms', 'workdir'])
    const again = await root.plugin(JobService)
    expect(parameterNames(root)).toEqual(['command', 'description', 'timeout_ms', 'workdir', 'run_in_background'])
    await fiber.dispose()
    expect(root.tools.list()).toEqual(['job_kill', 'job_list', 'job_output'])
    await again.dispose()
    expect(root.tools.list()).toEqual([])
    expect(errors).toEqual([])
  })

  it('refuses run_in_background for a call no agent owns', async () => {
    const { root, execute } = await bootBash()
    await root.plugin(JobService)
    // Called straight on the registry: no run identity, so no agent to own a job.
    const result = await execute({ command: 'echo hi', description: 'x', run_in_background: true })
    expect(result.isError && result.error.code).toBe('BACKGROUND_UNAVAILABLE')
  })
})

describe('the model-facing schema', () => {
  it('is this, without jobs (see the README for its token cost)', async () => {
    const { root } = await bootBash()
    const [schema] = root.tools.schemas()
    expect(schema).toMatchInlineSnapshot(`
      {
        "description": "Runs a shell command with bash -c and returns its output and exit code. Each call starts a new shell in the current directory (or workdir): cd, exports and aliases do not carry over. stdin is empty, so use non-interactive flags (e.g. --yes); there is no color, pager or editor. stdout and stderr come interleaved as they arrive; stderr lines start with "[stderr] ". Long output shows its first and last lines and the path of a file with all of it as text (invalid UTF-8 replaced), up to 64 MiB. A non-zero exit code is reported, not an error. At timeout_ms the command is stopped, with everything it started; processes it leaves running when it ends are stopped too. Prefer dedicated file tools, when you have them, for reading, searching and editing files.",
        "name": "bash",
        "parameters": {
          "additionalProperties": false,
          "properties": {
            "command": {
              "description": "The command line, run as bash -c "<command>".",
              "minLength": 1,
              "type": "string",
            },
            "description": {
              "description": "What the command does in 5-10 words, shown to the user, e.g. "Run the unit tests".",
              "maxLength": 200,
              "minLength": 1,
              "type": "string",
            },
            "timeout_ms": {
              "description": "Stop the command after this many milliseconds. Default 120000, at most 600000.",
              "maximum": 600000,
              "minimum": 1,
              "type": "integer",
            },
            "workdir": {
              "description": "Directory to start in: relative to the current directory, or absolute; inside the workspace. Default: the current directory.",
              "minLength": 1,
              "type": "string",
            },
          },
          "required": [
            "command",
            "description",
          ],
          "type": "object",
        },
      }
    `)
  })
})
