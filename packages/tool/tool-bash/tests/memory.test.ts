// bash printing far more than it keeps: rein's own memory stays bounded (the output goes to the
// spill file as it arrives), measured as the peak RSS of a separate process that runs the call.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const probe = fileURLToPath(new URL('./rss/print-output.ts', import.meta.url))
const repo = fileURLToPath(new URL('../../../../', import.meta.url))

interface Report {
  bytes: number
  rssBeforeKb: number
  peakRssKb: number
  resultChars: number
  exitCode: number
  savedBytes: number
}

async function measure(bytes: number): Promise<Report> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--conditions=@rein/source', probe, String(bytes)], { cwd: repo })
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as Report
}

describe('memory', () => {
  it('keeps the peak RSS bounded while bash prints 50 MB, and saves all of it', async () => {
    const small = await measure(1_000)
    const large = await measure(50 * 1024 * 1024)
    expect(large).toMatchObject({ exitCode: 0, savedBytes: 50 * 1024 * 1024 })
    expect(large.resultChars).toBeLessThan(16_000)
    // Held in memory, 50 MB of text is 100 MB of UTF-16: growth below the output's own size means it
    // was not held (the 1 GB run of the same probe peaks near 145 MB; see the README).
    expect(large.peakRssKb - small.peakRssKb).toBeLessThan(50 * 1024)
  }, 60_000)
})
