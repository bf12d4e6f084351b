/** `rein`'s entry: parse, dispatch, and turn any failure into one clear line and an exit code. */

import { errorChain, isReinError } from '@rein/base'
import { HELP, parseCommandLine, type ParsedArgs } from './args.ts'
import { chatCommand } from './commands/chat.ts'
import { demoCommand } from './commands/demo.ts'
import { resumeCommand } from './commands/resume.ts'
import { runCommand } from './commands/run.ts'
import { sessionsCommand } from './commands/sessions.ts'
import { showCommand } from './commands/show.ts'
import { EXIT } from './exit-codes.ts'
import type { Io } from './io.ts'

/** Codes that mean "nothing ran because of how rein was called or configured". */
const USAGE_CODES = new Set([
  'USAGE', 'CONFIG_INVALID', 'CONFIG_NOT_FOUND', 'NO_MODEL', 'MAX_COST_UNPRICED', 'SESSION_NOT_FOUND', 'SESSION_LOCKED',
  'SESSION_CORRUPT', 'SESSION_FORMAT_UNSUPPORTED', 'SESSION_UNKNOWN_EVENT', 'INVALID_SESSION_ID', 'NO_SESSION_STORE',
])

const COMMANDS = {
  run: runCommand,
  chat: chatCommand,
  sessions: sessionsCommand,
  resume: resumeCommand,
  show: showCommand,
  demo: demoCommand,
} satisfies Record<NonNullable<ParsedArgs['command']>, (args: ParsedArgs, io: Io) => Promise<number>>

export async function main(argv: readonly string[], io: Io): Promise<number> {
  let verbose = argv.includes('--verbose') || argv.includes('-v')
  try {
    const args = parseCommandLine(argv)
    verbose = args.options.verbose
    if (!args.command) {
      io.stdout.write(`${HELP.main}\n`)
      return args.options.help ? EXIT.ok : EXIT.usage
    }
    if (args.options.help) {
      io.stdout.write(`${HELP[args.command]}\n`)
      return EXIT.ok
    }
    return await COMMANDS[args.command](args, io)
  } catch (error) {
    io.stderr.write(`rein: ${describe(error)}\n`)
    if (verbose) io.stderr.write(`${errorChain(error)}\n`)
    return isReinError(error) && USAGE_CODES.has(error.code) ? EXIT.usage : EXIT.error
  }
}

function describe(error: unknown): string {
  if (isReinError(error, 'NO_MODEL')) {
    return 'no model configured: set DEEPSEEK_API_KEY, or OPENAI_API_KEY (OPENAI_BASE_URL for a local OpenAI-compatible server, with --model), or write a cordis.yml; rein demo shows the loop offline'
  }
  if (isReinError(error)) return error.message
  return error instanceof Error ? error.message : String(error)
}
