/**
 * A zombie: a process that has exited and that its parent never reaps, for testing code that asks
 * whether a pid still runs (a lock's owner, a temporary file's writer).
 */

import { spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { isZombie } from '@rein/base'

/** A zombie and the process holding it. */
export interface Zombie {
  /** The zombie's pid: /proc lists it with state Z until `stop`. */
  readonly pid: number
  /** Has the holder reap the zombie and exit (SIGTERM); resolves once it exited and the pid is gone. */
  stop(): Promise<void>
}

// Perl installs no SIGCHLD handler, so the child stays a zombie. A bash holder (`sleep 0 & exec
// sleep`) reaps its child itself when the child exits before the exec: 2 in 100 on a loaded machine.
// The holder reaps it on SIGTERM, not leaving it to PID 1, which in a container may reap nothing.
const SCRIPT = '$| = 1; my $pid = fork // die "fork: $!"; exit 0 unless $pid; $SIG{TERM} = sub { waitpid($pid, 0); exit 0 }; print "$pid\\n"; sleep 600'

/** Polls that may pass before the child has exited: a bound on a hang, not a speed check. */
const MAX_POLLS = 10_000

/** Starts a holder whose child exits at once; resolves once /proc shows the child as a zombie. */
export async function startZombie(): Promise<Zombie> {
  const holder = spawn('perl', ['-e', SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise<void>((resolve) => holder.once('exit', () => resolve()))
  const stop = async () => {
    holder.kill('SIGTERM')
    await exited
  }
  const pid = Number(await new Promise<string>((resolve, reject) => {
    holder.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString()))
    holder.once('error', reject)
    holder.once('exit', (code, signal) => reject(new Error(`the zombie's holder exited (${code ?? signal}) before it forked`)))
  }))
  for (let poll = 0; !isZombie(pid); poll++) {
    if (poll === MAX_POLLS) {
      await stop()
      throw new Error(`process ${pid} did not become a zombie`)
    }
    await sleep(1)
  }
  return { pid, stop }
}
