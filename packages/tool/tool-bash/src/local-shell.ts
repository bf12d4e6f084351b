/**
 * The local executor: provides `ctx.shell` and runs each command as a process on this machine.
 * Disposing it stops every command it is running and waits for them to end.
 */

import { Context, Service } from '@deepseek-ai/cordis'
import Schema from '@deepseek-ai/schemastery'
import { ReinError } from '@rein/base'
import { createEnvironment } from './environment.ts'
import { stopProcesses } from './process-stop.ts'
import { runCommand, type RunSettings } from './run-command.ts'
import type { ReapTarget, ShellExecutor, ShellExit, ShellRequest } from './shell.ts'

/** How the local executor runs commands. */
export interface LocalShellConfig {
  /** The shell program (it is given `-c <command>`). Default `bash`, found on the command's PATH. */
  shell: string
  /** Milliseconds between SIGTERM and SIGKILL when a command is stopped. Default 2000. */
  killGraceMs: number
  /** Variables set for every command, over the fixed ones. Default none. */
  env: Record<string, string>
  /** More names to pass through from rein's environment, besides the documented allow-list. Default none. */
  passEnv: string[]
}

/** The `LocalShell` part of a Config schema; the package's own Config reuses it. */
export const localShellFields: { [K in keyof LocalShellConfig]: Schema<LocalShellConfig[K]> } = {
  shell: Schema.string().default('bash').description('The shell program, run as <shell> -c <command>.'),
  killGraceMs: Schema.natural().min(1).max(60_000).default(2_000).description('Milliseconds from SIGTERM to SIGKILL when a command is stopped.'),
  env: Schema.dict(Schema.string()).default({}).description('Variables set for every command (over NO_COLOR, TERM, PAGER, …).'),
  passEnv: Schema.array(Schema.string()).default([]).description('Names passed through from rein\'s environment besides PATH, HOME, USER, LANG, LC_*, TZ, TMPDIR, …'),
}

interface ShellState {
  settings: RunSettings
  running: Map<AbortController, Promise<unknown>>
  closed: boolean
}

/** `ctx.shell` on this machine: `bash -c` in its own process group with a scrubbed environment. */
export class LocalShell extends Service implements ShellExecutor {
  static readonly Config: Schema<Partial<LocalShellConfig>, LocalShellConfig> = Schema.object(localShellFields)

  readonly kind = 'local'
  // One plain object (no #private fields: cordis calls methods through a proxy).
  private _state: ShellState

  constructor(ctx: Context, config: LocalShellConfig) {
    super(ctx, 'shell')
    const state: ShellState = {
      settings: {
        shell: config.shell,
        killGraceMs: config.killGraceMs,
        env: createEnvironment(process.env, config),
        logger: ctx.logger('shell'),
      },
      running: new Map(),
      closed: false,
    }
    this._state = state
    ctx.effect(() => () => stopAll(state), 'shell: stop running commands')
  }

  run(request: ShellRequest): Promise<ShellExit> {
    const state = this._state
    if (state.closed) {
      return Promise.reject(new ReinError('SHELL_START_FAILED', 'the local shell executor was disposed; the command was not started'))
    }
    const stop = new AbortController()
    const running = runCommand(state.settings, request, stop.signal)
    const settled = running.then(() => undefined, () => undefined).finally(() => state.running.delete(stop))
    state.running.set(stop, settled)
    return running
  }

  /** The group number may have been reused since it was recorded: only the marker is trusted. */
  reap(command: ReapTarget): Promise<number> {
    // Group 0 names no group: without a recorded one, the marker alone finds the command.
    const target = { marker: command.marker, processGroup: command.processGroup ?? 0 }
    return stopProcesses(target, this._state.settings.killGraceMs, { trustGroup: false })
  }
}

/** Stops every running command as if cancelled, and waits until each has ended. */
async function stopAll(state: ShellState) {
  state.closed = true
  const running = [...state.running]
  for (const [stop] of running) stop.abort()
  await Promise.all(running.map(([, settled]) => settled))
}
