// The loop benchmark's informational row "floor keeping a log fsynced where rein does" is what the
// fsyncs alone cost: it means something only while it makes the fsyncs rein makes. It drifted once
// (the bench's lookup was not declared pure, so rein fsynced before its body and the floor did not).
// Both runners are run here against the bench's mock server, their syncs counted.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const preload = fileURLToPath(new URL('fixtures/count-syncs.cjs', import.meta.url))
const TURNS = '2'

interface Syncs {
  fdatasync: number
  fsync: number
}

/** What the test uses of bench/loop/server.mjs (plain JavaScript, checked by its own JSDoc). */
interface MockServer {
  url: string
  close: () => Promise<void>
}

let server: MockServer
let kept: string
beforeAll(async () => {
  const bench = new URL('../../bench/loop/server.mjs', import.meta.url).href
  const { startMockServer } = (await import(bench)) as { startMockServer: () => Promise<MockServer> }
  server = await startMockServer()
  kept = mkdtempSync(join(tmpdir(), 'bench-mirror-'))
})
afterAll(async () => {
  await server.close()
  rmSync(kept, { recursive: true, force: true })
})

/** Runs one loop runner for a few turns; resolves with the syncs it made. */
function syncsOf(runner: string, variant: string, scenario: string, run: string): Promise<Syncs> {
  const calls = scenario === 'C' ? 3 : 1
  const args = ['--conditions=@rein/source', '--import', 'tsx', '--require', preload, join(root, 'bench/loop', runner), `${server.url}/${run}/${calls}/v1`, scenario, TURNS, variant]
  const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, REIN_BENCH_TMP: kept }, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk })
  return new Promise((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code) => {
      const line = /^SYNCS (.*)$/m.exec(stderr)
      if (code !== 0 || !line) reject(new Error(`${runner} ${variant} ${scenario} exited ${code}: ${stderr}`))
      else resolve(JSON.parse(line[1] ?? '') as Syncs)
    })
  })
}

describe('the floor keeping a log', () => {
  it.each(['A', 'B', 'C'])('fsyncs where rein (session-jsonl) does, in scenario %s', async (scenario) => {
    const rein = await syncsOf('rein.mjs', 'jsonl', scenario, `rein-${scenario}`)
    const floor = await syncsOf('floor.mjs', 'durable', scenario, `floor-${scenario}`)
    expect(floor).toEqual(rein)
    // Counted at all: the log is synced in every scenario.
    expect(rein.fdatasync).toBeGreaterThan(0)
  })
})
