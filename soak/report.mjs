// docs/reliability.md from the JSON each suite published (src/figures.ts) during `pnpm soak`.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { measuredCommit } from '../scripts/measured-commit.mjs'

const docFile = fileURLToPath(new URL('../docs/reliability.md', import.meta.url))

/** Every suite that must report; one missing from a run is named in the doc, never skipped silently. */
const SUITES = ['1-kill', '2-faults', '3-fuzz', '4-load', '5-disk', '6-escape', '7-leaks']

/** Reads every report in `dir` and writes the doc; returns its path. */
export function writeReport(dir, { minutes, passed }) {
  const reports = readdirSync(dir).filter((name) => name.endsWith('.json')).sort()
    .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')))
  writeFileSync(docFile, render(reports, { minutes, passed }))
  return docFile
}

function render(reports, { minutes, passed }) {
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.versions.node}, ${process.platform}`
  const lines = [
    '# Reliability',
    '',
    "rein's promise is that it does not lose work and does not do things twice. These figures are",
    'counted, not asserted in prose: `pnpm soak` (from a fresh clone: `pnpm install`, then `pnpm soak`)',
    'runs every suite in `soak/tests/` at full size and rewrites this file. `pnpm test` runs a fast',
    'subset of the same files. A figure with a required value fails its suite when it differs.',
    '',
    `Last run: ${new Date().toISOString().slice(0, 10)}, commit ${measuredCommit(fileURLToPath(new URL('..', import.meta.url)), 'docs/reliability.md')}, on ${machine}; ${minutes.toFixed(1)} minutes; ${passed ? 'every suite passed' : '**some suites failed** (marked below)'}.`,
    'Every random choice comes from a seed (shown per suite); `REIN_SOAK_SEED=<seed> pnpm soak --only <suite>` replays it.',
    '',
    ...overrides(),
  ]
  for (const report of reports) lines.push(...renderSuite(report))
  const missing = SUITES.filter((id) => !reports.some((report) => report.id === id))
  if (missing.length > 0) lines.push('## Suites that did not report', '', `${missing.join(', ')}: failed before counting (see the run's output); no figure from them is claimed.`, '')
  return `${lines.join('\n')}\n`
}

/** The size overrides the run was given (REIN_SOAK_<NAME>=N): the figures below are of that size. */
function overrides() {
  const notSizes = new Set(['REIN_SOAK_OUT', 'REIN_SOAK_SEED', 'REIN_SOAK_KEEP', 'REIN_SOAK_VERBOSE', 'REIN_SOAK_DEBUG', 'REIN_SOAK_TRACE', 'REIN_SOAK_KILL', 'REIN_SOAK_RUN'])
  const given = Object.entries(process.env).filter(([name]) => name.startsWith('REIN_SOAK_') && !notSizes.has(name))
  const seed = process.env.REIN_SOAK_SEED
  const lines = []
  if (given.length > 0) lines.push(`Sizes overridden in this run: ${given.map(([name, value]) => `\`${name}=${value}\``).join(', ')} (each suite's line says what it ran).`)
  if (seed !== undefined) lines.push(`Seed given for every suite: \`REIN_SOAK_SEED=${seed}\`.`)
  return lines.length === 0 ? [] : [...lines, '']
}

/** Whether a figure breaks what its suite requires (the same rule as src/figures.ts `broken`). */
function isBroken(figure) {
  return (figure.must !== undefined && figure.value !== figure.must)
    || (figure.atLeast !== undefined && !(typeof figure.value === 'number' && figure.value >= figure.atLeast))
}

function required(figure) {
  if (figure.must !== undefined) return String(figure.must)
  return figure.atLeast !== undefined ? `≥ ${format(figure.atLeast)}` : ''
}

/** One suite's section of the doc (also used to put a suite's later run in place of its first). */
export function renderSuite(report) {
  const bad = report.figures.filter(isBroken)
  const lines = [
    `## ${report.title}`,
    '',
    `${report.ran}${/[.!]$/.test(report.ran) ? '' : '.'}${report.seed !== undefined ? ` Seed ${report.seed}.` : ''}`,
    '',
    '| counted | figure | required |',
    '|---|---:|---:|',
  ]
  for (const figure of report.figures) {
    lines.push(`| ${figure.label} | ${format(figure.value)}${isBroken(figure) ? ' **✗**' : ''} | ${required(figure)} |`)
  }
  lines.push('', bad.length === 0 ? `**You may rely on:** ${report.promise}` : `**Not met this run** (${bad.length} figure${bad.length === 1 ? '' : 's'} above).`, '')
  return lines
}

function format(value) {
  return typeof value === 'number' ? String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ' ') : value
}
