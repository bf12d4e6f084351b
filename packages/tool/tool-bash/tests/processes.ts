// An independent look at /proc (never the package's own scan), unique tags, and a poll that gives up.
import { readdirSync, readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'

/** A string no other process on the machine has in its command line: `sleep 1000.<digits>`-style tags. */
export function uniqueTag(): string {
  return `1000.${randomBytes(4).readUInt32BE(0)}`
}

/**
 * Live (not zombie) processes whose command line or environment contains `text`, read straight
 * from /proc by this helper, never by the code under test.
 */
export function livingWith(text: string): number[] {
  const found: number[] = []
  const needle = Buffer.from(text)
  for (const name of readdirSync('/proc')) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
      if (/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3))) continue
      const cmdline = readFileSync(`/proc/${pid}/cmdline`)
      const environ = readFileSync(`/proc/${pid}/environ`)
      if (cmdline.includes(needle) || environ.includes(needle)) found.push(pid)
    } catch {
      // gone, or not readable
    }
  }
  return found
}

/** Polls `check` until it is true; throws with `what` after `limitMs` (a bound, never an assertion on speed). */
export async function waitFor(check: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const end = Date.now() + limitMs
  while (!check()) {
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`)
    await sleep(20)
  }
}
