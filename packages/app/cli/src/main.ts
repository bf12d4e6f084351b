/**
 * `rein`'s entry: parse, dispatch, and turn any failure into one clear line and an exit code.
 * Commands are imported when they run, so `rein --help` loads none of the stack.
 */

import { errorChain, isReinError, messageOf, maskText, secretValues } from '@rein/base'
import { HELP, parseCommandLine, type Command, type ParsedArgs } from './args.ts'
import { DEMO_PROVIDER } from './demo/provider.ts'
import { EXIT } from './exit-codes.ts'
import type { Io } from './io.ts'
import { baseUrlInBuiltInTerms } from './built-in-terms.ts'
import { shownCode } from './config-code.ts'
import { noModelAdvice } from './no-model.ts'
import { jsonLine } from './json-line.ts'
import { guardOutput } from './output-guard.ts'
import { neutralize } from './terminal-text.ts'

/** Codes that mean "nothing ran because of how rein was called or configured". */
const USAGE_CODES = new Set([
  'USAGE', 'CONFIG_INVALID', 'CONFIG_NOT_FOUND', 'NO_MODEL', 'MAX_COST_UNPRICED', 'UNKNOWN_PROVIDER',
  'UNSUPPORTED_REASONING_EFFORT', 'SERVICE_MISSING', 'SESSION_NOT_FOUND', 'SESSION_LOCKED', 'SESSION_BUSY', 'SESSION_CORRUPT', 'SESSION_TOO_LARGE',
  'SESSION_FORMAT_UNSUPPORTED', 'SESSION_UNKNOWN_EVENT', 'INVALID_SESSION_ID', 'NO_SESSION_STORE', 'NO_CHECKPOINT_STORE', 'PLUGIN_NOT_BUILT',
  'NO_MEMORY_STORE', 'MEMORY_NOT_FOUND', 'NO_CONTEXT_WINDOW', 'NOTHING_TO_CONTINUE',
])

type CommandFunction = (args: ParsedArgs, io: Io) => Promise<number>

const COMMANDS: Record<Command, () => Promise<CommandFunction>> = {
  run: async () => (await import('./commands/run.ts')).runCommand,
  chat: async () => (await import('./commands/chat.ts')).chatCommand,
  sessions: async () => (await import('./commands/sessions.ts')).sessionsCommand,
  resume: async () => (await import('./commands/resume.ts')).resumeCommand,
  show: async () => (await import('./commands/show.ts')).showCommand,
  rewind: async () => (await import('./commands/rewind.ts')).rewindCommand,
  compact: async () => (await import('./commands/compact.ts')).compactCommand,
  memory: async () => (await import('./commands/memory.ts')).memoryCommand,
  config: async () => (await import('./commands/config.ts')).configCommand,
  demo: async () => (await import('./commands/demo.ts')).demoCommand,
}

export async function main(argv: readonly string[], io: Io): Promise<number> {
  let verbose = argv.includes('--verbose') || argv.includes('-v')
  // Before `--` only: after it, `--json` is text (a task that starts with a dash).
  let json = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : argv.length).includes('--json')
  // Whether the command goes on with a stored session (whose route may be one no row serves now).
  let resuming = false
  const guarded = guardOutput(io)
  try {
    const args = parseCommandLine(argv)
    verbose = args.options.verbose
    json = args.options.json
    resuming = args.command === 'resume' || args.command === 'compact' || args.options.session !== undefined
    if (args.options.version) {
      guarded.stdout.write(`rein ${await version()}\n`)
      return EXIT.ok
    }
    if (!args.command) {
      // Asked for, help is the output; bare `rein` is a usage error, and those go to stderr.
      const out = args.options.help ? guarded.stdout : guarded.stderr
      out.write(`${HELP.main}\n`)
      return args.options.help ? EXIT.ok : EXIT.usage
    }
    if (args.options.help) {
      guarded.stdout.write(`${HELP[args.command]}\n`)
      return EXIT.ok
    }
    // Loaded with the command, as the command is: `rein --help` loads neither.
    await (await import('./home.ts')).checkHome(io.env)
    const command = await COMMANDS[args.command]()
    return await command(args, guarded)
  } catch (error) {
    // Messages can carry what a server or a config file said: no control characters reach the
    // terminal, and no secret (a key a check quoted, a password in a URL).
    const secrets = secretValues(io.env)
    // With --verbose the code is on the line, as the cause chain after it gives its own links' codes.
    const code = verbose && isReinError(error) ? `${error.code}: ` : shownCode(error)
    const said = `${code}${describe(error, io.env, resuming)}`
    guarded.stderr.write(`rein: ${neutralize(maskText(said, secrets))}\n`)
    // The line said this error, if in other words (a built-in composition's) or without its code (a usage error): its link is its own.
    const ownLink = isReinError(error) ? `${error.code}: ${error.message}` : said
    const chain = verbose ? afterSaid(errorChain(error), [ownLink, said]) : ''
    if (chain !== '') guarded.stderr.write(`${neutralize(maskText(chain, secrets))}\n`)
    const exit = isReinError(error) && USAGE_CODES.has(error.code) ? EXIT.usage : EXIT.error
    // A program reading --json lines learns why from them too, not only from the exit code.
    if (json) guarded.stdout.write(`${jsonLine({ type: 'error', code: isReinError(error) ? error.code : 'INTERNAL_ERROR', exit, message: maskText(describe(error, io.env, resuming), secrets) })}\n`)
    return exit
  } finally {
    guarded.release()
  }
}

/** `--verbose`'s cause chain, without its first link when the error line already said that error (`saidAs`: the link's text). */
function afterSaid(chain: string, saidAs: readonly string[]): string {
  for (const link of saidAs) {
    if (chain === link) return ''
    if (chain.startsWith(`${link}\n`)) return chain.slice(link.length + 1)
  }
  return chain
}

function describe(error: unknown, env: NodeJS.ProcessEnv, resuming: boolean): string {
  // One a cordis.yml's agents row caused says so itself (session-command.ts); the rest is the built-in composition's.
  if (isReinError(error, 'NO_MODEL') && error.details?.file !== undefined) return error.message
  if (isReinError(error, 'NO_MODEL')) return noModelAdvice(env)
  if (resuming && isReinError(error, 'UNKNOWN_PROVIDER') && error.details?.where === 'provider' && error.details.provider === DEMO_PROVIDER) return demoSessionLine(error.details.loaded)
  if (isReinError(error, 'CONFIG_INVALID')) return baseUrlInBuiltInTerms(error.message, env)
  if (isReinError(error)) return error.message
  return messageOf(error)
}

/** Resuming what `rein demo` made: its provider is the demo's own scripted server, which no composition has. */
function demoSessionLine(loaded: unknown): string {
  const names = Array.isArray(loaded) ? loaded.filter((name): name is string => typeof name === 'string') : []
  const pick = names.length === 1 ? `--provider ${names[0]}` : `--provider <${names.length > 0 ? `one of ${names.join(', ')}` : 'name'}>`
  return `this session was made by rein demo: its scripted model and its workspace are gone, so it is there for rein show; to go on with it anyway, with a model of yours, give ${pick} --model <id>`
}

/** This package's version: its package.json is one folder up from `src/` and from `dist/` alike. */
async function version(): Promise<string> {
  const { createRequire } = await import('node:module')
  return (createRequire(import.meta.url)('../package.json') as { version: string }).version
}
