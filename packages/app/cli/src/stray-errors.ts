/**
 * What fails with nothing to handle it — a promise a tool or plugin left rejected after its call
 * returned, a throw from its timer — is told the way rein tells every error: one line on stderr,
 * secrets masked, not Node's stack trace (that with --verbose).
 *
 * A stray rejection is a warning and rein goes on: whatever made it no longer waits for it, and the
 * turn has its own result. A stray throw ends the process (exit 1), as Node would: the code it came
 * from may be left half done. The log is durable at every step, so the session it ran is resumable.
 */

import { errorChain, maskText, messageOf, secretValues } from '@rein/base'
import { EXIT } from './exit-codes.ts'
import type { Io } from './io.ts'
import { neutralize } from './terminal-text.ts'

/** Installs the process's handlers for stray rejections and throws; `bin.ts` only, never a test's process. */
export function reportStrayErrors(io: Pick<Io, 'stderr' | 'env'>, verbose: boolean): void {
  const secrets = secretValues(io.env)
  const tell = (line: string, error: unknown) => {
    io.stderr.write(`rein: ${neutralize(maskText(`${line}: ${messageOf(error)}`, secrets))}\n`)
    if (verbose) io.stderr.write(`${neutralize(maskText(errorChain(error), secrets))}\n`)
  }
  process.on('unhandledRejection', (reason) => {
    tell('warning: a promise was rejected with nothing to handle it (a bug, most likely in a tool or plugin); rein goes on', reason)
  })
  process.on('uncaughtException', (error) => {
    tell('an error was thrown with nothing to catch it (a bug, most likely in a tool or plugin), so rein stops', error)
    io.stderr.write('rein: what a session saved is kept: rein sessions shows one that needs repair, and rein resume <id> continues it\n')
    process.exit(EXIT.error)
  })
}
