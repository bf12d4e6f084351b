/** Command-line parsing and help text. `node:util` `parseArgs`: no dependency for a few flags. */

import { parseArgs } from 'node:util'
import { ReinError } from '@rein/base'
import { EXIT_HELP } from './exit-codes.ts'

const COMMANDS = ['run', 'chat', 'sessions', 'resume', 'show', 'demo'] as const
export type Command = (typeof COMMANDS)[number]

export interface CliOptions {
  config?: string
  provider?: string
  model?: string
  system?: string
  maxSteps?: number
  maxOutputTokens?: number
  maxCost?: number
  session?: string
  json: boolean
  yes: boolean
  verbose: boolean
  help: boolean
}

export interface ParsedArgs {
  command: Command | undefined
  positionals: string[]
  options: CliOptions
}

const FLAGS = {
  config: { type: 'string', short: 'c' },
  provider: { type: 'string' },
  model: { type: 'string', short: 'm' },
  system: { type: 'string' },
  'max-steps': { type: 'string' },
  'max-output-tokens': { type: 'string' },
  'max-cost': { type: 'string' },
  session: { type: 'string', short: 's' },
  json: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
} as const

export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  let parsed
  try {
    parsed = parseArgs({ args: [...argv], options: FLAGS, allowPositionals: true, strict: true })
  } catch (error) {
    throw new ReinError('USAGE', `${(error as Error).message.replace(/\. To specify.*$/s, '')}; see rein --help`)
  }
  const [first, ...positionals] = parsed.positionals
  if (first !== undefined && !COMMANDS.includes(first as Command)) {
    throw new ReinError('USAGE', `unknown command "${first}"; commands: ${COMMANDS.join(', ')} (see rein --help)`)
  }
  const values = parsed.values
  return {
    command: first as Command | undefined,
    positionals,
    options: {
      ...(values.config !== undefined ? { config: values.config } : {}),
      ...(values.provider !== undefined ? { provider: values.provider } : {}),
      ...(values.model !== undefined ? { model: values.model } : {}),
      ...(values.system !== undefined ? { system: values.system } : {}),
      ...(values.session !== undefined ? { session: values.session } : {}),
      ...number('max-steps', values['max-steps'], true),
      ...number('max-output-tokens', values['max-output-tokens'], true),
      ...number('max-cost', values['max-cost'], false),
      json: values.json ?? false,
      yes: values.yes ?? false,
      verbose: values.verbose ?? false,
      help: values.help ?? false,
    },
  }
}

function number(flag: string, raw: string | undefined, integer: boolean): Record<string, number> {
  if (raw === undefined) return {}
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new ReinError('USAGE', `--${flag} needs a positive ${integer ? 'whole ' : ''}number, not "${raw}"`)
  }
  const key = flag.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())
  return { [key]: value }
}

const COMMON = `
Options for run, chat, resume and demo:
  -c, --config <file>        cordis.yml to load (default: ./cordis.yml if present, else built in)
      --provider <route>     provider route, e.g. deepseek, openai
  -m, --model <id>           model id
      --system <text>        opening of the system prompt
      --max-steps <n>        model requests per turn
      --max-output-tokens <n>  output tokens per turn
      --max-cost <amount>    money per turn (the model needs pricing)
  -y, --yes                  allow tool calls that ask for approval
      --json                 print events as JSON lines on stdout
  -v, --verbose              print where requests go (provider, model, base URL) and the cause chain of errors
  -h, --help                 show help`

export const HELP: Record<Command | 'main', string> = {
  main: `rein — a durable agent harness

Usage: rein <command> [options]

Commands:
  run "task"          run one turn and exit (--session <id> continues a session)
  chat                talk in a loop on a terminal
  sessions            list stored sessions
  resume <id> [text]  repair an interrupted session and continue it
  show <id>           print a session (never changes it)
  demo                the whole loop offline, against a scripted model

Environment (read by the built-in composition, used when there is no ./cordis.yml and no --config):
  DEEPSEEK_API_KEY    enables the DeepSeek provider
  OPENAI_API_KEY      enables the OpenAI provider
  OPENAI_BASE_URL     enables an OpenAI-compatible server (vLLM, Ollama, llama.cpp, …); when set it
                      is the default provider, even if DEEPSEEK_API_KEY is set too
  REIN_MODEL          the model (--model beats it; a resumed session keeps the model it used)
  REIN_HOME           where sessions live (default ~/.rein), also for a --config without a root
  NO_COLOR            no colours
${COMMON}

${EXIT_HELP}`,
  run: `Usage: rein run "task" [--session <id>] [options]

Runs one turn. Prints the session id to stderr, streams the answer to stdout, one line per tool
call to stderr, and a final line with tokens and cost.
${COMMON}`,
  chat: `Usage: rein chat [--session <id>] [options]

An interactive loop on a terminal. Ctrl-C cancels the running turn; a second Ctrl-C exits.
Tool calls that ask for approval are asked at the prompt.
${COMMON}`,
  sessions: `Usage: rein sessions [--config <file>] [--json]

Lists stored sessions, newest first.`,
  resume: `Usage: rein resume <id> ["more text"] [options]

Repairs a session that ended mid-turn (every tool call paired, replay-safe calls run once more)
and continues it: with the text as a new message, or by letting the model answer what it missed.
${COMMON}`,
  show: `Usage: rein show <id> [--config <file>] [--json]

Prints a session readably. Never writes to it: an interrupted turn is shown as such, not repaired.`,
  demo: `Usage: rein demo [--json]

Runs the full stack offline: a local mock server plays a scripted model that lists and reads the
files of a small temporary workspace and answers. Nothing leaves the machine; no key is needed.`,
}
