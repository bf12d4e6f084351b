/**
 * Kills a process for real at a point it names: waits for a line it prints on stdout, then sends
 * SIGKILL and waits for it to exit. For crash tests whose fixture prints a marker where it stops.
 */

import { once } from 'node:events'
import type { ChildProcessByStdio } from 'node:child_process'
import type { Readable } from 'node:stream'

/**
 * SIGKILLs `child` once it prints the line `marker` (after `whileAlive`, run while it still waits
 * there); rejects, with what it printed, if it exits first.
 */
export async function killWhenPrinted(child: ChildProcessByStdio<null, Readable, Readable>, marker: string, whileAlive?: () => Promise<void>): Promise<void> {
  const exited = once(child, 'exit')
  let out = ''
  let err = ''
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.split('\n').includes(marker)) resolve()
    })
    child.once('exit', (code) => reject(new Error(`the fixture exited (${code}) before printing ${marker}:\n${out}\n${err}`)))
  })
  try {
    await whileAlive?.()
  } finally {
    child.kill('SIGKILL')
  }
  await exited
}
