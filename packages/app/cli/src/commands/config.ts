/**
 * `rein config`: which composition is in use, and what each row runs with, secrets masked. It loads
 * the composition as `run` would (that is how the defaults and `!!js` values are known) and sends
 * nothing to a model.
 */

import type { CompositionRow } from '@rein/compose'
import type { ParsedArgs } from '../args.ts'
import { BUILT_IN_ENVIRONMENT, builtInLacksModel, disposeUnlessStalled, loadUnlessSignalled } from '../composition.ts'
import { EXIT } from '../exit-codes.ts'
import { STOPPING_THE_LOAD, trapInterrupts } from '../interrupts.ts'
import { noModelAdvice } from '../no-model.ts'
import type { Io } from '../io.ts'
import { jsonLine } from '../json-line.ts'
import { maskSecrets, maskText, secretValues } from '@rein/base'
import { neutralize } from '../terminal-text.ts'

export async function configCommand(args: ParsedArgs, io: Io): Promise<number> {
  // A signal while the rows start gives the load up (exit 130), as for every command.
  const interrupts = trapInterrupts(io, (text) => io.stderr.write(`${text}\n`), STOPPING_THE_LOAD)
  const loaded = await loadUnlessSignalled({ ...(args.options.config !== undefined ? { config: args.options.config } : {}), cwd: io.cwd, env: io.env, stderr: io.stderr }, interrupts, io)
  if (!loaded) return EXIT.interrupted
  const { composition, source } = loaded
  try {
    const secrets = secretValues(io.env)
    const rows = composition.rows().map((row) => ({ ...row, config: maskSecrets(plain(row.config), secrets) }))
    const environment = source === 'built-in' ? Object.fromEntries(BUILT_IN_ENVIRONMENT.map((name) => [name, Boolean(io.env[name])])) : undefined
    // What rein run would refuse to start with (NO_MODEL) is said here too, where a person looks first.
    if (source === 'built-in' && builtInLacksModel(io.env)) io.stderr.write(`${neutralize(`rein: ${maskText(noModelAdvice(io.env), secrets)}`)}\n`)
    if (args.options.json) {
      io.stdout.write(`${jsonLine({ source, ...(environment ? { environment } : {}), rows })}\n`)
      return 0
    }
    const lines = [source === 'built-in' ? `built-in composition, made from ${describeEnvironment(environment ?? {})}` : `file ${source}`, '']
    for (const row of rows) lines.push(...describeRow(row))
    io.stdout.write(`${neutralize(lines.join('\n'))}\n`)
    return 0
  } finally {
    await disposeUnlessStalled(composition, undefined, io)
    interrupts.release()
  }
}

/** `OPENAI_BASE_URL (set), REIN_MODEL (not set), …` */
function describeEnvironment(environment: Record<string, boolean>): string {
  return Object.entries(environment).map(([name, set]) => `${name} (${set ? 'set' : 'not set'})`).join(', ')
}

/** `row "llm" (@rein/llm)` and one line per top-level config key, its value as JSON. */
function describeRow(row: CompositionRow): string[] {
  const notes = [row.group === undefined ? '' : ` in group "${row.group}"`, row.disabled ? ' [disabled]' : ''].join('')
  const head = `row "${row.id}" (${row.name})${notes}`
  const { config } = row
  if (config === undefined) return [head]
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return [head, `  ${JSON.stringify(config)}`]
  const entries = Object.entries(config)
  if (entries.length === 0) return [head, '  (no settings)']
  return [head, ...entries.map(([key, value]) => `  ${key}: ${JSON.stringify(value)}`)]
}

/** Config as JSON would carry it: what a plugin's schema made (class instances, functions) shown as data. */
function plain(value: unknown): unknown {
  if (value === undefined) return undefined
  try {
    return JSON.parse(JSON.stringify(value)) as unknown
  } catch {
    return '(not printable as JSON)'
  }
}
