/**
 * The environment a command runs with: a short allow-list from rein's own environment (never its
 * keys and tokens), fixed values that keep output plain and non-interactive, then the user's own.
 */

/** Names passed through from rein's environment when set: where things are, who and what locale. */
export const PASSED_THROUGH: readonly string[] = Object.freeze([
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR',
])

/** Every `LC_*` locale variable is passed through too. */
const LOCALE = /^LC_[A-Z_]+$/

/**
 * Set for every command: no colour, no pager, no terminal prompt that would wait forever, and an
 * editor that fails at once (`git commit` without `-m` says so instead of waiting for the timeout).
 */
export const FIXED_ENVIRONMENT: Readonly<Record<string, string>> = Object.freeze({
  NO_COLOR: '1',
  TERM: 'dumb',
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  MANPAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
  GIT_EDITOR: 'false',
  EDITOR: 'false',
  VISUAL: 'false',
})

/** What `Config` adds: fixed values, and more names to pass through. */
export interface EnvironmentOptions {
  env: Readonly<Record<string, string>>
  passEnv: readonly string[]
}

/**
 * The base environment of every command: allowed names from `parent`, then `FIXED_ENVIRONMENT`,
 * then `options.env` (which may override the fixed values; it is the user's choice).
 */
export function createEnvironment(parent: NodeJS.ProcessEnv, options: EnvironmentOptions): Record<string, string> {
  const env: Record<string, string> = {}
  const names = new Set([...PASSED_THROUGH, ...options.passEnv])
  for (const [name, value] of Object.entries(parent)) {
    if (value !== undefined && (names.has(name) || LOCALE.test(name))) env[name] = value
  }
  return { ...env, ...FIXED_ENVIRONMENT, ...options.env }
}
