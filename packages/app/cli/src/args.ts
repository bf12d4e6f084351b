/** Command-line parsing and help text. `node:util` `parseArgs`: no dependency for a few flags. */

import { parseArgs } from 'node:util'
import { messageOf, ReinError, shellWord } from '@rein/base'
import type { ToolEffect } from '@rein/tools'
import { EXIT_HELP } from './exit-codes.ts'

const COMMANDS = ['run', 'chat', 'sessions', 'resume', 'show', 'rewind', 'compact', 'memory', 'config', 'demo'] as const
export type Command = (typeof COMMANDS)[number]

/** The effects `--allow` names: @rein/tools' `TOOL_EFFECTS`, spelled out so `--help` loads no tools. */
export const ALLOWABLE_EFFECTS: readonly ToolEffect[] = ['read', 'write', 'exec', 'network']

export interface CliOptions {
  config?: string
  provider?: string
  model?: string
  system?: string
  maxSteps?: number
  maxOutputTokens?: number
  maxCost?: number
  session?: string
  /** `rewind --to`: a turn number (from 1) or the id of the message that started the turn. */
  to?: string
  /** `rewind --dry-run`: print the plan, change nothing. */
  dryRun: boolean
  /** `rewind --fork`: also start a session whose log is the original's prefix before that turn. */
  fork: boolean
  /** `memory list --all`: retired and expired entries and other projects' too. */
  all: boolean
  json: boolean
  yes: boolean
  /** Effects whose calls run without asking (`--allow write,exec`). */
  allow: ToolEffect[]
  verbose: boolean
  help: boolean
  version: boolean
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
  to: { type: 'string' },
  'dry-run': { type: 'boolean' },
  fork: { type: 'boolean' },
  all: { type: 'boolean' },
  json: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  allow: { type: 'string', multiple: true },
  verbose: { type: 'boolean', short: 'v' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const

/** Flags every command takes (`--version` prints the version, whatever else is given). */
const ANY_COMMAND = ['help', 'verbose', 'version'] as const
/** What a command that runs a turn takes: the options `--help` lists under COMMON. */
const TURN_FLAGS = ['config', 'provider', 'model', 'system', 'max-steps', 'max-output-tokens', 'max-cost', 'yes', 'allow', 'json'] as const

/** The flags each command reads; any other is refused, not ignored (`run --dry-run` would change files). */
const COMMAND_FLAGS: Record<Command | 'none', readonly (keyof typeof FLAGS)[]> = {
  none: [],
  run: [...TURN_FLAGS, 'session'],
  chat: [...TURN_FLAGS, 'session'],
  resume: TURN_FLAGS,
  // One summary request, no tool: a turn's budgets, approvals and system text would be ignored, so they are refused.
  compact: ['config', 'provider', 'model', 'json'],
  sessions: ['config', 'json'],
  show: ['config', 'json'],
  rewind: ['config', 'json', 'to', 'dry-run', 'fork'],
  memory: ['config', 'json', 'all'],
  config: ['config', 'json'],
  demo: ['json'],
}

function takesFlag(command: Command | undefined, flag: string): boolean {
  const takes: readonly string[] = [...ANY_COMMAND, ...COMMAND_FLAGS[command ?? 'none']]
  return takes.includes(flag)
}

function refuseForeignFlag(command: Command | undefined, flag: string): void {
  if (takesFlag(command, flag)) return
  throw new ReinError('USAGE', command ? `rein ${command} does not take --${flag}; see rein ${command} --help` : `--${flag} goes with a command; see rein --help`)
}

type Token = NonNullable<ReturnType<typeof parseArgs>['tokens']>[number]
type OptionToken = Extract<Token, { kind: 'option' }>

/** Node keeps the last of a repeated single-value flag: `--to 5 --to 2` would quietly rewind to 2. */
function refuseRepeatedValues(tokens: readonly Token[]): void {
  const given = new Map<string, string[]>()
  for (const token of tokens) {
    if (token.kind !== 'option' || token.value === undefined) continue
    const flag = FLAGS[token.name as keyof typeof FLAGS]
    if ('multiple' in flag && flag.multiple) continue
    given.set(token.name, [...(given.get(token.name) ?? []), token.value])
  }
  const repeated = [...given].find(([, values]) => values.length > 1)
  if (!repeated) return
  const [name, values] = repeated
  throw new ReinError('USAGE', `--${name} was given more than once (${values.map((value) => JSON.stringify(value)).join(', ')}); it takes one value`)
}

function helpFor(command: Command | undefined): string {
  return command ? `rein ${command} --help` : 'rein --help'
}

/**
 * What a command's free text is called, and the command line that passes one starting with a dash
 * (`rein resume <id> -- "-x …"`); a command with no free text has none, as `memory` but `search`.
 */
function freeText(command: Command | undefined, positionals: readonly string[]): { what: string; before: string } | undefined {
  const id = positionals[1] ?? '<id>'
  if (command === 'run') return { what: 'a task', before: 'rein run' }
  if (command === 'resume') return { what: 'a message', before: `rein resume ${id}` }
  if (command === 'compact') return { what: 'a text', before: `rein compact ${id}` }
  if (command === 'memory' && positionals[1] === 'search') return { what: 'a query', before: 'rein memory search' }
  return undefined
}

/** A flag rein does not know, refused as the command refuses one it does not take; "--" advised only where text goes. */
function unknownFlag(command: Command | undefined, token: OptionToken, argv: readonly string[], positionals: readonly string[]): ReinError {
  const text = freeText(command, positionals)
  const arg = argv[token.index] ?? token.rawName
  // `rein run "-x task"`: Node reads the whole argument as flags; the example shows it as the text it was.
  const example = /\s/.test(arg) ? arg : `${arg} …`
  const advice = text ? `${text.what} that starts with a dash goes after '--': ${text.before} -- ${JSON.stringify(example)}; ` : ''
  // A word Node read as short flags (`-minus`: -m, -i…) is named as typed where text may go: it was text.
  const named = text && isShortFlagWord(arg) ? arg : token.rawName
  return new ReinError('USAGE', `rein${command ? ` ${command}` : ''} does not take ${named}; ${advice}see ${helpFor(command)}`)
}

/** `-minus`, `-y`: one argument of a single dash and no space, which Node reads as short flags. */
function isShortFlagWord(arg: string): boolean {
  return /^-[^-\s]\S*$/.test(arg)
}

/**
 * One flag as typed, checked before Node's strict parse, whose errors are several lines and
 * command-blind: unknown or not this command's, a switch given a value, a value missing, empty
 * (`--config "$CFG"` with CFG unset must not mean "no --config"), or one that looks like a flag.
 */
function checkFlag(command: Command | undefined, token: OptionToken, argv: readonly string[], positionals: readonly string[]): void {
  if (!Object.hasOwn(FLAGS, token.name)) throw unknownFlag(command, token, argv, positionals)
  const name = token.name as keyof typeof FLAGS
  // `rein memory search -y`: a flag of other commands in a word that can only have been text here.
  if (!takesFlag(command, name) && freeText(command, positionals) && isShortFlagWord(argv[token.index] ?? '')) throw unknownFlag(command, token, argv, positionals)
  refuseForeignFlag(command, name)
  const { value } = token
  if (FLAGS[name].type === 'boolean') {
    if (value !== undefined) throw new ReinError('USAGE', `--${name} takes no value, not ${JSON.stringify(value)}; see ${helpFor(command)}`)
    return
  }
  if (value === undefined) throw new ReinError('USAGE', `--${name} needs a value; see ${helpFor(command)}`)
  if (value === '') throw new ReinError('USAGE', `--${name} is empty; give it a value or leave it out`)
  // As Node: a lone "-" is a value; "-1" after a space may be a forgotten value followed by a flag.
  if (token.inlineValue || value.length < 2 || !value.startsWith('-')) return
  const numeric = NUMERIC_FLAGS[name]
  if (numeric !== undefined) number(name, value, numeric === 'whole')
  throw new ReinError('USAGE', `--${name} needs a value, and ${JSON.stringify(value)} looks like a flag; a value that starts with a dash goes as --${name}=${shellWord(value)}`)
}

/** The flags `number` reads, and whether each is a whole number. */
const NUMERIC_FLAGS: Partial<Record<keyof typeof FLAGS, 'whole' | 'decimal'>> = { 'max-steps': 'whole', 'max-output-tokens': 'whole', 'max-cost': 'decimal' }

/** The most arguments a command takes; the others take text (a task, a message) or a subcommand. */
const MAX_ARGUMENTS: Partial<Record<Command, 0 | 1>> = { sessions: 0, config: 0, demo: 0, chat: 0, show: 1, rewind: 1 }

export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  // Loose first: it keeps going past an unknown flag, so the command is known to every message.
  const loose = parseArgs({ args: [...argv], options: FLAGS, allowPositionals: true, strict: false, tokens: true })
  const [first] = loose.positionals
  if (first !== undefined && !COMMANDS.includes(first as Command)) {
    throw new ReinError('USAGE', `unknown command "${first}"; commands: ${COMMANDS.join(', ')} (see rein --help)`)
  }
  const command = first as Command | undefined
  for (const token of loose.tokens) {
    if (token.kind === 'option') checkFlag(command, token, argv, loose.positionals)
  }
  let parsed
  try {
    parsed = parseArgs({ args: [...argv], options: FLAGS, allowPositionals: true, strict: true, tokens: true })
  } catch (error) {
    // checkFlag saw what Node refuses; should Node refuse more, its first line, not its three.
    const [line = ''] = messageOf(error).split('\n', 1)
    throw new ReinError('USAGE', `${line.replace(/\. To specify.*$/, '')}; see ${helpFor(command)}`)
  }
  const positionals = parsed.positionals.slice(1)
  refuseRepeatedValues(parsed.tokens)
  const most = command === undefined ? undefined : MAX_ARGUMENTS[command]
  if (most !== undefined && positionals.length > most && !parsed.values.help) {
    const takes = most === 0 ? 'no arguments' : 'one argument'
    throw new ReinError('USAGE', `rein ${command} takes ${takes}, not "${positionals.join(' ')}"; see rein ${command} --help`)
  }
  const values = parsed.values
  return {
    command,
    positionals,
    options: {
      ...(values.config !== undefined ? { config: values.config } : {}),
      ...(values.provider !== undefined ? { provider: values.provider } : {}),
      ...(values.model !== undefined ? { model: values.model } : {}),
      ...(values.system !== undefined ? { system: values.system } : {}),
      ...(values.session !== undefined ? { session: values.session } : {}),
      ...(values.to !== undefined ? { to: values.to } : {}),
      ...number('max-steps', values['max-steps'], true),
      ...number('max-output-tokens', values['max-output-tokens'], true),
      ...number('max-cost', values['max-cost'], false),
      dryRun: values['dry-run'] ?? false,
      fork: values.fork ?? false,
      all: values.all ?? false,
      json: values.json ?? false,
      yes: values.yes ?? false,
      allow: effects(values.allow ?? []),
      verbose: values.verbose ?? false,
      help: values.help ?? false,
      version: values.version ?? false,
    },
  }
}

/** `--allow write,exec` (also `--allow write --allow exec`), each name checked. */
function effects(lists: readonly string[]): ToolEffect[] {
  const names = lists.flatMap((list) => list.split(',')).map((name) => name.trim())
  const unknown = names.filter((name) => !(ALLOWABLE_EFFECTS as readonly string[]).includes(name))
  if (unknown.length > 0) {
    const shown = unknown.map((name) => `"${name}"`).join(', ')
    throw new ReinError('USAGE', `--allow takes a comma-separated list of effects (${ALLOWABLE_EFFECTS.join(', ')}), not ${shown}`)
  }
  return ALLOWABLE_EFFECTS.filter((effect) => names.includes(effect))
}

/** Plain decimal digits, as a person types a count or an amount: no sign, exponent, hex or spaces. */
const WHOLE = /^\d+$/
const DECIMAL = /^(\d+\.?\d*|\.\d+)$/

function number(flag: string, raw: string | undefined, integer: boolean): Record<string, number> {
  if (raw === undefined) return {}
  // Number() alone would take 0x10, 1e3 and " 5 ".
  const value = (integer ? WHOLE : DECIMAL).test(raw) ? Number(raw) : Number.NaN
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isSafeInteger(value))) {
    throw new ReinError('USAGE', `--${flag} needs a positive ${integer ? 'whole ' : ''}number, not "${raw}"`)
  }
  const key = flag.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase())
  return { [key]: value }
}

const COMMON = `
Options for run, chat and resume (--session: run and chat); every command also takes
-v and -h, and each command's --help lists the others it takes (any other is refused, and an
empty value too; a value that starts with a dash goes as --model=-x, a task as rein run -- "-x …"):
  -c, --config <file>        cordis.yml to load (default: ./cordis.yml, else $REIN_HOME/cordis.yml,
                             else built in; rein config shows which)
      --provider <route>     provider route, e.g. deepseek, openai
  -m, --model <id>           model id
      --system <text>        opening of the system prompt
      --max-steps <n>        model requests per turn
      --max-output-tokens <n>  output tokens per turn
      --max-cost <amount>    money per turn (the model needs pricing)
  -y, --yes                  allow every tool call that needs approval
      --allow <effects>      allow calls whose effects are all listed, e.g. --allow write,exec
                             (effects: read, write, exec, network)
      --json                 print events as JSON lines on stdout (a failure that stops the
                             command as a last {"type":"error","code",...} line)
  -v, --verbose              print where requests go (provider, model, base URL), the cause chain of errors,
                             and the plugins' notices (their warnings are always printed)
  -h, --help                 show help
      --version              print rein's version`

export const HELP: Record<Command | 'main', string> = {
  main: `rein — a durable agent harness

Usage: rein <command> [options]

Commands:
  run "task"          run one turn and exit (--session <id> continues a session; "-" reads the task from stdin)
  chat                talk in a loop on a terminal
  sessions            list stored sessions
  resume <id> [text]  repair an interrupted session and continue it
  show <id>           print a session, turns with checkpoints marked (never changes it)
  rewind <id> --to N  put the files the agent changed back to before turn N (--dry-run, --fork)
  compact <id> [text] shorten a session's context now: old tool results pruned, earlier turns summarized
  memory list         what the agent remembers (also: search <query>, forget <id>, export)
  config              show which cordis.yml is in use and each row's config (secrets masked)
  demo                the whole loop offline, against a scripted model, and a rewind

Environment (read by the built-in composition, used when there is no --config, ./cordis.yml or
$REIN_HOME/cordis.yml):
  DEEPSEEK_API_KEY    enables the DeepSeek provider
  OPENAI_API_KEY      enables the OpenAI provider
  OPENAI_BASE_URL     enables an OpenAI-compatible server (vLLM, Ollama, llama.cpp, …); when set it
                      is the default provider, even if DEEPSEEK_API_KEY is set too
  REIN_MODEL          the model (--model beats it; a resumed session keeps the model it used)
  REIN_HOME           where sessions and memory.db live (default ~/.rein), also for a --config
                      without a root; $REIN_HOME/cordis.yml is used when there is no ./cordis.yml
  NO_COLOR            no colours
${COMMON}

${EXIT_HELP}`,
  run: `Usage: rein run "task" [--session <id>] [options]
       rein run - [options] < task.txt

Runs one turn. Prints the session id to stderr, streams the answer to stdout, one line per tool
call to stderr, and a final line with tokens and cost. With "-" alone as the task, the task is read
from stdin until it ends (a task that is "-" itself: echo - | rein run -).

Nobody is asked: a tool call that needs approval (by default one that writes files or runs
commands) is denied, and the model is told how to allow it, unless --yes or --allow covers it or
the cordis.yml has its own approval row.
${COMMON}`,
  chat: `Usage: rein chat [--session <id>] [options]

An interactive loop on a terminal. Ctrl-C cancels the running turn; a second Ctrl-C, or Ctrl-C at
the prompt, exits. Ctrl-D (end of input) exits once the lines typed ahead are sent. Lines typed while
a turn runs are queued and sent in order, one message per line (a pasted block too).
/compact [what to keep] shortens the context now; /help lists the keys and commands. Any other line
that starts with /word is refused, not sent; start it with a space to send it as written.
A tool call that needs approval (and that --yes or --allow does not cover) is asked at the prompt:
y allows it, n (or any other answer, Ctrl-D too) denies it, a allows that tool for the rest of this session ([a]lways; until the
chat ends).
Saving the cordis.yml in use applies the edit at the next turn and says which rows changed; an
edit that does not load is refused, and the rows keep running as they were.
${COMMON}`,
  sessions: `Usage: rein sessions [--config <file>] [--json]

Lists stored sessions, newest first. A log it cannot read is named on stderr, not listed.
Exit codes: 0 listed (or none stored yet), 1 none of those stored could be read.`,
  resume: `Usage: rein resume <id> ["more text"] [options]

Repairs a session that ended mid-turn (every tool call paired, replay-safe calls run once more)
and continues it: with the text as a new message, or by letting the model answer what it missed.
Approval works as in rein run.
${COMMON}`,
  show: `Usage: rein show <id> [--config <file>] [--json]

Prints a session readably. Never changes its conversation: an interrupted turn is shown as such,
not repaired. With @rein/checkpoint loaded, a turn that changed files is marked
[checkpoint: N files]; rein rewind <id> --to <turn> puts them back.`,
  compact: `Usage: rein compact <id> ["what the summary must keep"] [options]

Compacts a stored session now, whatever its size: tool results older than the last turns become
one-line stubs (the model can read them again with recall_result), and the conversation before the
last turns becomes one summary (goal, decisions, open tasks, notes, and the files touched, from the
log). The log keeps everything; rein show marks the compaction. Needs a model whose context window
is known (contextWindow in its provider's models). A session a crash left mid-turn is closed first,
its open calls paired; nothing runs again. Agents compact by themselves before a request would pass
80% of the window (less on a small one: room for the answer is kept); this is for doing it now.

Options:
  -c, --config <file>        cordis.yml to load (as for run)
      --provider <route>     provider route, e.g. deepseek, openai (the summary's, unless the
                             agents row's compaction names a summaryRoute)
  -m, --model <id>           model id (the same)
      --json                 print the outcome as a JSON line
  -v, --verbose, -h, --help  as for every command`,
  rewind: `Usage: rein rewind <id> --to <turn number|message id> [--dry-run] [--fork] [--config <file>] [--json]

Puts the files the agent changed (every change @rein/checkpoint recorded) back to their state
before that turn; every later turn's changes are undone too. Turns count from 1, as rein show
numbers them; a message id selects the turn that message started. A file changed since the
agent's edit (by a person, an editor, a command) is left as it is and reported as drifted.
Prints a table (file, outcome, reason), then what the records cannot restore. The conversation
keeps its turns; the model is told at its next request which files went back.

  --to <turn|id>   the turn to go back before (required)
  --dry-run        print what would happen; change nothing
  --fork           also start a new session holding the conversation before that turn, so files
                   and conversation are back together: rein resume <new id> "…" continues it.
                   The original session is left exactly as it was. Refused for turn 1 (empty fork)
  --json           print the plan or the result (and the fork) as JSON lines

Needs @rein/checkpoint and @rein/checkpoint-jsonl in the composition (the built-in one has them).
Refused while the session is in use by another process (a chat, a run): wait for it or end it.
A file a command created (found by a snapshot around bash) is moved aside to
$REIN_HOME/recovered/<session>/<time>/ rather than deleted: it may have come from elsewhere.
Exit codes: 0 every file is back (or nothing to rewind), 5 some files were left as they are
(drifted, skipped or failed, or a command was cut off by a kill; with --dry-run: would be), 2 bad usage, an unknown, busy or damaged
session log, 1 a checkpoint log that could not be read (damaged; the message names the file), or
with --fork, FORK_FAILED: the files were rewound but the fork could not be created.`,
  memory: `Usage: rein memory list [--all] [--json] [--config <file>]
       rein memory search <query> [--json] [--config <file>]
       rein memory forget <id> [--json] [--config <file>]
       rein memory export [--config <file>]

What the agent remembers across sessions (@rein/memory), so you can see and fix it. Entries are
about the user (every project) or about one project (by default the folder's real path).

  list             the live entries of the user and of this project (the folder rein runs in):
                   id, scope, type, age (since the last change) and content, cut to one line
  --all            also retired entries (superseded by a correction), expired ones, and other
                   projects' entries (their project shown)
  search <query>   the user's and this project's live entries, best match first
  forget <id>      delete one entry for good (rein memory list shows the ids)
  export           every entry, all fields, as JSON lines: to keep, inspect or diff
  --json           list, search and forget: the entries as JSON lines (export always is)

The agent sees these entries in its system prompt under "## What you remember", taken when a
session starts; a change here reaches the next session, not a running one. Needs @rein/memory and
a store (@rein/memory-sqlite, $REIN_HOME/memory.db) in the composition; the built-in one has both.
Exit codes: 0 done, 1 the store failed (damaged, locked, unreadable: the message says what to do),
2 bad usage, an unknown id, or no memory in the composition.`,
  config: `Usage: rein config [--config <file>] [--json]

Prints which cordis.yml is in use (--config, else ./cordis.yml, else $REIN_HOME/cordis.yml), or
that the built-in composition is, with the environment variables it was made from; then each row's
id, plugin and the config it runs with (defaults filled in, !!js evaluated). Loads the composition
as run would, and sends nothing to a model. Secrets are masked as ***: the value of any key one
of whose words ends in key, secret, password, passwd, authorization or credential (or their
plurals), or in token (not tokens: maxTokens is a count); every value under a headers key; a URL's
user:password@ and secret-named query parameters; and any text equal to (or holding) the value of
an environment variable named that way. A key ending in Env (apiKeyEnv) names a variable and is
shown. --json prints one JSON object.`,
  demo: `Usage: rein demo [--json]

Runs the full stack offline: a local mock server plays a scripted model that reads a README in a
small temporary workspace, fixes a typo with an edit, has a subagent check the fix with bash, and
answers. Then the turn is rewound, as rein rewind would, and the README is back as it was. Nothing
leaves the machine; no key is needed.`,
}

