/**
 * Keeps one `bash` tool registered, in the variant that matches the services present: with
 * `run_in_background` while `ctx.jobs` is loaded, without it otherwise. A swap disposes one
 * registration before making the other, so the name is never taken twice.
 */

import type { Context } from '@deepseek-ai/cordis'
import type {} from '@rein/jobs'
import { createBackground } from './background.ts'
import { createBashTool, type StartInBackground } from './bash-tool.ts'
import type { BashToolConfig } from './config.ts'
import type { LocalShellConfig } from './local-shell.ts'

// FiberState is a `declare const enum` in cordis's typings; isolatedModules needs the numbers.
const LOADING = 1
const ACTIVE = 2

/** Registers the tool for the plugin's lifetime; running calls stop when it goes. */
export function registerBash(ctx: Context, config: BashToolConfig & Pick<LocalShellConfig, 'killGraceMs'>) {
  const stop = new AbortController()
  ctx.effect(() => () => stop.abort(), 'bash: stop running calls')
  const shell = () => ctx.get('shell')
  let current: (() => unknown) | undefined
  const show = (background?: StartInBackground) => {
    current?.()
    current = ctx.tools.register(createBashTool({ ...config, shell, signal: stop.signal, ...(background ? { background } : {}) }))
  }
  show()
  ctx.inject(['jobs'], (inner) => {
    show(createBackground(() => inner.get('jobs')))
    inner.effect(() => () => {
      // The jobs service left while this plugin stays: back to the variant without the argument.
      // When the plugin itself is going, its registration goes with it and nothing is made.
      const state: number = ctx.fiber.state
      if (state === ACTIVE || state === LOADING) show()
    }, 'bash: back to foreground only')
  })
}
