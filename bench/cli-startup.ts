/**
 * Start-up cost of the built `rein` command: `rein --help` against `node -e ''`, each a fresh
 * process, median wall time over many runs. `rein --help` imports no command (they load lazily).
 * Run: pnpm bench (it builds first). `REIN_BIN` measures another build of the command.
 */

import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { measure, report } from './measure.ts'

const bin = process.env.REIN_BIN ?? fileURLToPath(new URL('../packages/app/cli/dist/bin.mjs', import.meta.url))
const run = (args: string[]) => () => {
  const child = spawnSync(process.execPath, args, { stdio: 'ignore' })
  if (child.status !== 0) throw new Error(`${args.join(' ')} exited ${String(child.status)}`)
}

const options = { iterations: 5, rounds: 9, warmup: 3 }
const bare = await measure("node -e ''", run(['-e', '']), options)
const help = await measure('rein --help', run([bin, '--help']), options)
const sessions = await measure('rein sessions --help', run([bin, 'sessions', '--help']), options)
report('cli-startup: one process start (median of 9 rounds x 5)', bare, [help, sessions])
