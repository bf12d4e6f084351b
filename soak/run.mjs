// `pnpm soak`: every reliability suite at full size, then docs/reliability.md from what they counted.
// Options: --only <file part>[,…] runs some suites (the doc is then not written); REIN_SOAK_SEED
// replays a seed; REIN_SOAK_<NAME>=N overrides one size (see src/plan.ts).
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeReport } from './report.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const args = process.argv.slice(2)
const onlyAt = args.indexOf('--only')
const only = onlyAt >= 0 ? (args[onlyAt + 1] ?? '').split(',').filter(Boolean) : []
if (args.includes('--help')) {
  console.log('usage: pnpm soak [--only kill,fuzz,…]   (full-size reliability suites; writes docs/reliability.md)')
  process.exit(0)
}

const out = mkdtempSync(join(tmpdir(), 'rein-soak-'))
const started = Date.now()
const vitest = spawnSync('pnpm', ['exec', 'vitest', 'run', '--config', 'soak/vitest.config.ts', ...only], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, REIN_SOAK: 'full', REIN_SOAK_OUT: out },
})
const minutes = (Date.now() - started) / 60_000
// A failed suite is reported too: the doc shows the figure that broke, not the last good one.
if (only.length === 0) {
  const file = writeReport(out, { minutes, passed: vitest.status === 0 })
  console.log(`\nwrote ${file}`)
} else {
  console.log('\nsome suites only: docs/reliability.md left as it was')
}
rmSync(out, { recursive: true, force: true })
process.exit(vitest.status ?? 1)
