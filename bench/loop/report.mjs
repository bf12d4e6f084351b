// @ts-check
/**
 * The loop benchmark's report: medians per harness × scenario, ratios to the floor, the targets of
 * issue #16 marked met or missed, and what each number means. Pure: run.mjs passes what it measured
 * and gets markdown back (written to docs/benchmarks.md).
 */

/**
 * @typedef {{ id: string, label: string, file: string, variant?: string, peer?: boolean, layer?: boolean, nodeFlags?: string[] }} Harness
 * @typedef {{ rep: number, ok: boolean, reason?: string, stderrTail?: string, metrics?: Record<string, number> }} Run
 * @typedef {{ ok: boolean, figures?: Record<string, any>, reason?: string, stderrTail?: string }} Extra
 * @typedef {{
 *   date: Date, commit: string, command: string, turns: number, reps: number, warmup: number, quick: boolean, partial: boolean,
 *   machine: { cpu: string, cores: number, memGiB: number, node: string, os: string, load: number[] },
 *   scenarios: ('A' | 'B' | 'C')[], harnesses: Harness[], skipped: { harness: Harness, reason: string }[],
 *   runs: Map<string, Run[]>, extras: Record<string, Extra>, extrasRun: boolean,
 *   compiler?: Record<string, Record<string, import('./compiler.mjs').CompilerTrace | undefined>>,
 * }} ReportInput
 */

const CPU_TARGET = 1.3
const FLAT_TARGET = 1.1
const RSS_GROWTH_TARGET = 10
const PEAK_RSS_TARGET = 140
const RESUME_TARGET = 1.5
const COLD_START_TARGET = 1.5

/** The median of the finite `values` (NaN when none); the mean of the middle two for an even count. */
function median(/** @type {number[]} */ values) {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b)
  if (sorted.length === 0) return Number.NaN
  const mid = Math.floor(sorted.length / 2)
  const at = (/** @type {number} */ i) => /** @type {number} */ (sorted[i])
  return sorted.length % 2 === 1 ? at(mid) : (at(mid - 1) + at(mid)) / 2
}

const METRICS = ['cpu', 'helper', 'wall', 'startup', 'peakRss', 'rssGrowth', 'heapGrowth', 'prefixMean', 'otlpKiBPerTurn']

/** Medians over a cell's successful runs, the lowest prefix share seen, and its failures. */
function aggregate(/** @type {Run[] | undefined} */ runs) {
  const ok = (runs ?? []).filter((run) => run.ok && run.metrics)
  const failed = (runs ?? []).filter((run) => !run.ok)
  /** @type {Record<string, number>} */
  const m = {}
  for (const name of METRICS) m[name] = median(ok.map((run) => /** @type {Record<string, number>} */ (run.metrics)[name] ?? Number.NaN))
  m.prefixMin = Math.min(...ok.map((run) => /** @type {Record<string, number>} */ (run.metrics).prefixMin ?? Number.NaN))
  if (ok.length === 0) m.prefixMin = Number.NaN
  return { ok, failed, total: (runs ?? []).length, m }
}

/** CPU off the main thread per turn and its share of the whole, as `1.23 (31 %)`. */
function offMain(/** @type {Record<string, number>} */ m) {
  return has(m.helper) && has(m.cpu) && m.cpu > 0 ? `${fixed(m.helper, 2)} (${Math.round((m.helper / m.cpu) * 100)} %)` : '—'
}

const has = (/** @type {number | undefined} */ n) => n !== undefined && Number.isFinite(n)
const fixed = (/** @type {number | undefined} */ n, digits = 2) => (has(n) ? /** @type {number} */ (n).toFixed(digits) : '—')
/** `x / base` as `2.91×` (one decimal from 10×); `—` when either is missing. */
function times(/** @type {number | undefined} */ x, /** @type {number | undefined} */ base) {
  if (!has(x) || !has(base) || base === 0) return '—'
  const r = /** @type {number} */ (x) / /** @type {number} */ (base)
  return `${r.toFixed(r >= 10 ? 1 : 2)}×`
}

/** @param {ReportInput} input */
export function renderReport(input) {
  const { scenarios, harnesses, runs, turns } = input
  const cells = new Map(harnesses.flatMap((h) => scenarios.map((s) => [`${h.id}/${s}`, aggregate(runs.get(`${h.id}/${s}`))])))
  const cell = (/** @type {string} */ id, /** @type {string} */ s) => cells.get(`${id}/${s}`)
  const floor = (/** @type {string} */ s) => cell('floor', s)?.m
  const heading = { A: 'A: 1 tool call, fresh history', B: `B: 1 call, ${turns}-turn session`, C: 'C: 3 parallel calls' }
  const failNote = (/** @type {ReturnType<typeof aggregate> | undefined} */ c) => (c && c.failed.length > 0 ? ` (${c.failed.length}/${c.total} failed)` : '')
  const out = []

  out.push('# Benchmarks', '')
  out.push('<!-- Written by bench/loop/run.mjs (`pnpm bench`) on each run; edit the runner, not this file. -->', '')
  const { machine } = input
  out.push(`Measured ${input.date.toISOString().replace(/\.\d+Z$/, 'Z')} with \`${input.command}\` at commit ${input.commit} on ${machine.cpu}, ${machine.cores} cores, ${machine.memGiB.toFixed(1)} GiB RAM, Node ${machine.node}, ${machine.os}; load average ${machine.load.map((l) => l.toFixed(2)).join(' / ')} (1 / 5 / 15 min) at the start.`)
  out.push(`Each harness ran ${turns} measured turns (after ${input.warmup} unmeasured warm-up turns) per scenario, in its own process, ${input.reps} repetition${input.reps === 1 ? '' : 's'} interleaved; every figure is the median over the repetitions. Ratios are to the floor in the same scenario; compare ratios, not absolute times, across machines.`)
  const steady = input.warmup !== 10
  if (input.quick || input.partial || input.reps < 3 || steady) {
    out.push('', `> **Not a full run** (${[input.quick ? 'quick mode' : '', input.partial ? 'a subset of the harnesses' : '', input.reps < 3 ? `${input.reps} repetition${input.reps === 1 ? '' : 's'}` : '', steady ? `${input.warmup} warm-up turns, not the issue's 10` : ''].filter(Boolean).join(', ')}): the figures are indicative only. \`pnpm bench\` makes the full table.`)
  }
  out.push('')

  // Main table: CPU per turn as a multiple of the floor.
  out.push('## CPU per turn, as a multiple of the floor', '')
  out.push(`| harness | ${scenarios.map((s) => heading[s]).join(' | ')} |`, `|---|${scenarios.map(() => '---').join('|')}|`)
  for (const h of harnesses) {
    const row = scenarios.map((s) => {
      const c = cell(h.id, s)
      if (!c || c.ok.length === 0) return 'failed'
      const base = h.id === 'floor' ? `1.00× (${fixed(c.m.cpu, 3)} ms)` : times(c.m.cpu, floor(s)?.cpu)
      return base + failNote(c)
    })
    out.push(`| ${h.label} | ${row.join(' | ')} |`)
  }
  out.push('')
  out.push('CPU is user + system time of the harness process over the measured turns (process.cpuUsage), per turn. The floor row gives its absolute CPU ms per turn.', '')

  // rein's layers, as per-turn CPU added over the in-memory composition.
  const layerRows = [
    ['rein-memory', 'floor', 'rein in memory over the floor: llm runtime + adapter, tools pipeline, session (in memory), agent loop'],
    ['rein-memory', 'floor-http', 'rein in memory over the floor over node:http: the same, on the same transport'],
    ['rein-jsonl', 'rein-memory', 'session-jsonl: the log written and fsynced (rein layer: session-jsonl − in-memory)'],
    ['floor-durable', 'floor', 'for comparison, a bare log fsynced at the same points (floor keeping a log − floor): what those fsyncs cost on this machine'],
    ['rein-telemetry', 'rein-memory', 'telemetry + otel-http export (rein layer: telemetry − in-memory)'],
    ['rein', 'rein-memory', 'both: session-jsonl + telemetry (durable − in-memory)'],
  ].filter(([id, base]) => harnesses.some((h) => h.id === id) && harnesses.some((h) => h.id === base))
  if (layerRows.length > 0) {
    out.push("### rein's layers: CPU ms per turn each adds", '')
    out.push(`| layer | ${scenarios.join(' | ')} |`, `|---|${scenarios.map(() => '---').join('|')}|`)
    for (const [id, base, label] of layerRows) {
      const row = scenarios.map((s) => {
        const a = cell(/** @type {string} */ (id), s)?.m.cpu
        const b = cell(/** @type {string} */ (base), s)?.m.cpu
        return has(a) && has(b) ? `${/** @type {number} */ (a) - /** @type {number} */ (b) >= 0 ? '+' : ''}${fixed(/** @type {number} */ (a) - /** @type {number} */ (b), 3)} ms` : '—'
      })
      out.push(`| ${label} | ${row.join(' | ')} |`)
    }
    out.push('', 'Differences of medians from separate processes: small figures are within the noise. The tools pipeline alone is measured below (`ctx.tools.execute`).', '')
  }

  // Detail tables.
  out.push('## Details per scenario', '')
  for (const s of scenarios) {
    const base = floor(s)
    out.push(`### ${heading[s]}`, '')
    out.push('| harness | CPU ms/turn | of it off the main thread | wall ms/turn | startup ms | peak RSS MB | RSS growth MB | live heap growth MB | prefix % mean (lowest) | OTLP KiB/turn | runs ok |')
    out.push('|---|---|---|---|---|---|---|---|---|---|---|')
    for (const h of harnesses) {
      const c = cell(h.id, s)
      if (!c || c.ok.length === 0) {
        out.push(`| ${h.label} | failed | | | | | | | | | 0/${c?.total ?? 0} |`)
        continue
      }
      const m = c.m
      const growthRatio = has(base?.rssGrowth) && /** @type {number} */ (base?.rssGrowth) >= 1 && /** @type {number} */ (m.rssGrowth) >= 0 ? ` (${times(m.rssGrowth, base?.rssGrowth)})` : ''
      out.push(`| ${h.label} | ${fixed(m.cpu, 3)} (${times(m.cpu, base?.cpu)}) | ${offMain(m)} | ${fixed(m.wall, 3)} (${times(m.wall, base?.wall)}) | ${fixed(m.startup, 0)} (${times(m.startup, base?.startup)}) | ${fixed(m.peakRss, 1)} (${times(m.peakRss, base?.peakRss)}) | ${fixed(m.rssGrowth, 1)}${growthRatio} | ${fixed(m.heapGrowth, 1)} | ${fixed(m.prefixMean, 2)} (${fixed(m.prefixMin, 2)}) | ${h.variant === 'durable' || h.variant === 'telemetry' ? fixed(m.otlpKiBPerTurn, 1) : '—'} | ${c.ok.length}/${c.total} |`)
    }
    out.push('')
  }

  // Extra measurements.
  out.push('## Resume, cold start, tool calls', '')
  if (!input.extrasRun) out.push('Not measured in this run (`--no-extras`).', '')
  const { resume, cli, tools, stream } = input.extras
  const extraFailed = (/** @type {string} */ name, /** @type {Extra | undefined} */ extra) => {
    if (!input.extrasRun || !extra || extra.ok) return false
    out.push(`${name}: **failed** (${extra.reason}):`, '', '```', extra.stderrTail ?? '', '```', '')
    return true
  }
  if (resume?.ok && resume.figures) {
    const f = resume.figures
    out.push(`**Resume** (bench/agent-session.ts): a ${f.events}-event session (${(f.bytes / 1024 / 1024).toFixed(1)} MiB of JSONL), median of ${f.rounds ?? 9} rounds, the parse and the resume alternating.`, '')
    out.push('| | ms | ratio |', '|---|---|---|')
    out.push(`| readFile + JSON.parse per line | ${fixed(f.parseMs, 1)} | 1.00× |`)
    out.push(`| \`ctx.agents.resume\` + derive the next request | ${fixed(f.resumeMs, 1)} | ${times(f.resumeMs, f.parseMs)} |`)
    out.push('', `Over a ${f.requestBytes?.length ?? '?'}-step run, ${f.prefixKept}/${f.prefixCompared} requests' messages extend the previous request's byte for byte.`, '')
  } else extraFailed('Resume (agent-session.ts)', resume)
  if (cli?.ok && cli.figures) {
    const f = cli.figures
    out.push('**Cold start** (bench/cli-startup.ts), each a fresh process of the built `rein` (packages/app/cli/dist/bin.mjs):', '')
    out.push('| | ms | ratio to node |', '|---|---|---|')
    out.push(`| \`node -e ''\` (spawnSync, median of 9 rounds × 5) | ${fixed(f.nodeMs, 1)} | 1.00× |`)
    out.push(`| \`rein --help\` | ${fixed(f.helpMs, 1)} | ${times(f.helpMs, f.nodeMs)} |`)
    out.push(`| \`rein sessions --help\` | ${fixed(f.sessionsHelpMs, 1)} | ${times(f.sessionsHelpMs, f.nodeMs)} |`)
    out.push(`| \`node -e ''\` (async spawn, to exit, median of 9) | ${fixed(f.runNodeMs, 1)} | 1.00× |`)
    if (f.onePostFirstRequestMs !== undefined) out.push(`| \`node\` sending one POST over node:http: spawn to the request at the mock server | ${fixed(f.onePostFirstRequestMs, 1)} | ${times(f.onePostFirstRequestMs, f.runNodeMs)} |`)
    if (f.importsPostFirstRequestMs !== undefined) out.push(`| \`node\` importing the ${f.importedModules} ES modules \`rein run\` has loaded by its first request, then sending one POST (issue #16's "node + imports") | ${fixed(f.importsPostFirstRequestMs, 1)} | ${times(f.importsPostFirstRequestMs, f.runNodeMs)} |`)
    out.push(`| \`rein run "hi"\`: spawn to the first request at the mock server | ${fixed(f.runFirstRequestMs, 1)} | ${times(f.runFirstRequestMs, f.runNodeMs)} |`)
    out.push(`| \`rein run "hi"\`: spawn to exit (the whole one-turn run) | ${fixed(f.runExitMs, 1)} | ${times(f.runExitMs, f.runNodeMs)} |`)
    if (f.everyFirstRequestMs !== undefined) {
      out.push(`| \`rein run "hi"\`, every package composed: spawn to the first request | ${fixed(f.everyFirstRequestMs, 1)} | ${times(f.everyFirstRequestMs, f.runNodeMs)} |`)
      out.push(`| \`rein run "hi"\`, every package composed: spawn to exit | ${fixed(f.everyExitMs, 1)} | ${times(f.everyExitMs, f.runNodeMs)} |`)
    }
    out.push('', '`rein run` loads a cordis.yml (llm, llm-openai at a local mock server answering one text at once, tools, session + session-jsonl, agent) with a temporary REIN_HOME. "Every package" adds what examples/cordis.yml composes: memory + memory-sqlite, checkpoint + checkpoint-jsonl, tool-fs, jobs, tool-bash, telemetry + otel-http exporting to a local endpoint (informational, no target). The "node + imports" row is the issue\'s baseline for the first request: a script that imports the ES modules the same `rein run` had loaded when its request arrived (recorded once with a loader hook), then sends one POST. It grows with whatever rein imports, so the ratios to `node -e \'\'` stay beside it.', '')
  } else extraFailed('Cold start (cli-startup.ts)', cli)
  if (tools?.ok && tools.figures) {
    const f = tools.figures
    out.push('**Tool calls** (bench/tools-overhead.ts): one trivial tool call, median of 7 rounds × 20 000.', '')
    out.push('| | ns/call | × direct | × parse + call |', '|---|---|---|---|')
    out.push(`| direct call | ${fixed(f.directNs, 0)} | 1.00× | — |`)
    out.push(`| JSON.parse the arguments + direct call | ${fixed(f.parsedNs, 0)} | ${times(f.parsedNs, f.directNs)} | 1.00× |`)
    out.push(`| \`ctx.tools.execute\`, no hooks | ${fixed(f.executeNs, 0)} | ${times(f.executeNs, f.directNs)} | ${times(f.executeNs, f.parsedNs)} |`)
    out.push(`| \`ctx.tools.execute\`, async body | ${fixed(f.executeAsyncNs, 0)} | ${times(f.executeAsyncNs, f.directNs)} | ${times(f.executeAsyncNs, f.parsedNs)} |`)
    out.push(`| \`ctx.tools.execute\`, one of each hook | ${fixed(f.executeHookedNs, 0)} | ${times(f.executeHookedNs, f.directNs)} | ${times(f.executeHookedNs, f.parsedNs)} |`)
    out.push('')
  } else extraFailed('Tool calls (tools-overhead.ts)', tools)
  if (stream?.ok && stream.figures) {
    const f = stream.figures
    out.push(`**Stream events** (bench/llm-parse.ts): ${f.events} OpenAI stream events in 1,400-byte reads, median of 15; the adapter's parsing (SSE framing with its idle watchdog, JSON.parse, the shape check, translation; \`readSseData\` over a web stream: the adapter's own framing, \`SseFramer\`, read through one generator more than the adapter's loop, so an upper bound) against eventsource-parser + JSON.parse on the same bytes.`, '')
    out.push('| | ns/event | ratio |', '|---|---|---|')
    out.push(`| eventsource-parser + JSON.parse | ${fixed(f.bareNs, 0)} | 1.00× |`)
    out.push(`| @rein/llm-openai: readSseData + parse + translate | ${fixed(f.adapterNs, 0)} | ${times(f.adapterNs, f.bareNs)} |`)
    out.push('')
  } else extraFailed('Stream events (llm-parse.ts)', stream)

  out.push(...compilerSection(input))
  out.push(...targets(input, cell, floor))

  // Failures and skips: never dropped silently.
  const failures = harnesses.flatMap((h) => scenarios.flatMap((s) => (runs.get(`${h.id}/${s}`) ?? []).filter((run) => !run.ok).map((run) => ({ h, s, run }))))
  if (failures.length > 0 || input.skipped.length > 0) {
    out.push('## Failed and skipped runs', '')
    for (const { harness, reason } of input.skipped) out.push(`- ${harness.label}: skipped, ${reason}.`)
    if (input.skipped.length > 0) out.push('')
    for (const { h, s, run } of failures) {
      out.push(`- ${h.label}, scenario ${s}, repetition ${run.rep + 1}: ${run.reason}`)
      if (run.stderrTail) out.push('', '  ```', ...run.stderrTail.split('\n').map((line) => `  ${line}`), '  ```', '')
    }
    out.push('')
  }

  out.push(...meanings(turns, input.warmup))
  return `${out.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd()}\n`
}

/**
 * rein's CPU over the floor's within each repetition, where the two ran in the same round, as
 * ` (per repetition 1.71–2.02)`: how far the machine moved the ratio. Empty with fewer than two.
 * @param {Map<string, Run[]>} runs
 * @param {string} s
 */
function perRepetition(runs, s) {
  const cpuByRep = (/** @type {string} */ id) => new Map((runs.get(`${id}/${s}`) ?? []).flatMap((run) => (run.ok && run.metrics ? [[run.rep, run.metrics.cpu]] : [])))
  const rein = cpuByRep('rein')
  const floor = cpuByRep('floor')
  const ratios = [...rein].flatMap(([rep, cpu]) => (floor.has(rep) ? [cpu / /** @type {number} */ (floor.get(rep))] : [])).sort((a, b) => a - b)
  return ratios.length < 2 ? '' : ` (per repetition ${fixed(ratios[0])}–${fixed(ratios.at(-1))})`
}

/**
 * The targets of issue #16, each met or missed with its figure.
 * @param {ReportInput} input
 * @param {(id: string, s: string) => ReturnType<typeof aggregate> | undefined} cell
 * @param {(s: string) => Record<string, number> | undefined} floor
 */
function targets(input, cell, floor) {
  const { scenarios, harnesses, extras } = input
  const lines = ['## Targets', '', 'For `rein (session-jsonl + telemetry)`, from the figures above (issue #16):', '']
  const mark = (/** @type {boolean | undefined} */ met, /** @type {string} */ text) => lines.push(`- **${met === undefined ? 'not measured' : met ? 'met' : 'missed'}**: ${text}`)
  const rein = (/** @type {string} */ s) => cell('rein', s)?.m
  const all = (/** @type {number[]} */ values) => values.length === scenarios.length && values.every(has)

  const cpu = scenarios.map((s) => /** @type {number} */ (rein(s)?.cpu) / /** @type {number} */ (floor(s)?.cpu))
  const logged = scenarios.map((s) => /** @type {number} */ (rein(s)?.cpu) / /** @type {number} */ (cell('floor-durable', s)?.m.cpu))
  const pair = (/** @type {string} */ ours, /** @type {string} */ theirs) => scenarios.map((s) => /** @type {number} */ (cell(ours, s)?.m.cpu) / /** @type {number} */ (cell(theirs, s)?.m.cpu))
  const noopt = pair('rein-noopt', 'floor-noopt')
  const inline = pair('rein-inline', 'floor-inline')
  const loggedText = [
    all(logged) ? `against the floor keeping the same fsynced log, informational: ${scenarios.map((s, i) => `${s} ${fixed(logged[i])}×`).join(', ')}` : '',
    all(noopt) ? `both with V8's optimizing compiler off, informational: ${scenarios.map((s, i) => `${s} ${fixed(noopt[i])}×`).join(', ')}` : '',
    all(inline) ? `both with V8's inlining limited, informational: ${scenarios.map((s, i) => `${s} ${fixed(inline[i])}×`).join(', ')}` : '',
  ].filter(Boolean).map((text) => ` (${text})`).join('')
  mark(all(cpu) ? cpu.every((r) => r <= CPU_TARGET) : undefined, `CPU per turn ≤ ${CPU_TARGET}× the floor in ${scenarios.join(', ')}: ${scenarios.map((s, i) => `${s} ${has(cpu[i]) ? `${fixed(cpu[i])}×${perRepetition(input.runs, s)}` : '—'}`).join(', ')}${loggedText}`)

  const peers = harnesses.filter((h) => h.peer)
  /** @type {string[]} */
  const ahead = []
  /** @type {string[]} */
  const unmeasured = []
  for (const peer of peers) {
    for (const s of scenarios) {
      const theirs = cell(peer.id, s)?.m.cpu
      const ours = rein(s)?.cpu
      if (!has(theirs) || !has(ours)) unmeasured.push(`${peer.id} ${s}`)
      else if (/** @type {number} */ (theirs) <= /** @type {number} */ (ours)) ahead.push(`${peer.label.replace(/ \(.*$/, '')} in ${s} (${times(theirs, floor(s)?.cpu)} against ${times(ours, floor(s)?.cpu)})`)
    }
  }
  const measuredPeers = peers.length * scenarios.length - unmeasured.length
  const peerText = measuredPeers === 0 ? 'no peer was measured' : ahead.length === 0 ? `rein uses less CPU per turn than each of ${peers.filter((p) => scenarios.some((s) => has(cell(p.id, s)?.m.cpu))).length} peers in every scenario` : `at or ahead of rein: ${ahead.join('; ')}`
  mark(measuredPeers === 0 ? undefined : ahead.length === 0, `CPU per turn below every peer: ${peerText}${unmeasured.length > 0 && measuredPeers > 0 ? ` (not compared, failed or absent: ${unmeasured.join(', ')})` : ''}`)

  const a = rein('A')?.cpu
  const b = rein('B')?.cpu
  const flat = has(a) && has(b) ? /** @type {number} */ (b) / /** @type {number} */ (a) : Number.NaN
  const floorFlat = /** @type {number} */ (floor('B')?.cpu) / /** @type {number} */ (floor('A')?.cpu)
  mark(has(flat) ? flat <= FLAT_TARGET : undefined, `flat with history, CPU B/A ≤ ${FLAT_TARGET}: ${fixed(flat)} (B ${fixed(b, 3)} ms / A ${fixed(a, 3)} ms; the floor's own B/A ${fixed(floorFlat)})`)

  const prefixMin = scenarios.map((s) => /** @type {number} */ (rein(s)?.prefixMin))
  const prefixMean = scenarios.map((s) => /** @type {number} */ (rein(s)?.prefixMean))
  mark(all(prefixMin) ? prefixMin.every((p) => p >= 100 - 1e-9) : undefined, `request-prefix stability 100 %: ${scenarios.map((s, i) => `${s} mean ${fixed(prefixMean[i])} %, lowest ${fixed(prefixMin[i])} %`).join('; ')}`)

  const growth = scenarios.map((s) => /** @type {number} */ (rein(s)?.rssGrowth))
  const heap = scenarios.map((s) => /** @type {number} */ (rein(s)?.heapGrowth))
  mark(all(growth) ? growth.every((g) => g < RSS_GROWTH_TARGET) : undefined, `RSS growth from turn 10 to ${input.turns} < ${RSS_GROWTH_TARGET} MB: ${scenarios.map((s, i) => `${s} ${fixed(growth[i], 1)} MB`).join(', ')}${input.turns < 200 ? ` (over ${input.turns} turns, not 200)` : ''}; live heap after a full collection grew ${scenarios.map((s, i) => `${s} ${fixed(heap[i], 1)} MB`).join(', ')}`)

  const peak = scenarios.map((s) => /** @type {number} */ (rein(s)?.peakRss))
  mark(all(peak) ? peak.every((p) => p <= PEAK_RSS_TARGET) : undefined, `peak RSS ≤ ${PEAK_RSS_TARGET} MB: ${scenarios.map((s, i) => `${s} ${fixed(peak[i], 1)} MB`).join(', ')}`)

  const resume = extras.resume?.ok ? extras.resume.figures : undefined
  const resumeRatio = resume ? resume.resumeMs / resume.parseMs : Number.NaN
  mark(has(resumeRatio) ? resumeRatio <= RESUME_TARGET : undefined, `resume ≤ ${RESUME_TARGET}× JSON.parse of the same bytes: ${resume ? `${fixed(resumeRatio)}× (${fixed(resume.resumeMs, 1)} ms against ${fixed(resume.parseMs, 1)} ms)` : '—'}`)

  const cli = extras.cli?.ok ? extras.cli.figures : undefined
  const help = cli ? cli.helpMs / cli.nodeMs : Number.NaN
  mark(has(help) ? help <= COLD_START_TARGET : undefined, `cold start of \`rein --help\` ≤ ${COLD_START_TARGET}× \`node -e ''\`: ${cli ? `${fixed(help)}× (${fixed(cli.helpMs, 1)} ms against ${fixed(cli.nodeMs, 1)} ms)` : '—'}`)
  const first = cli?.importsPostFirstRequestMs ? cli.runFirstRequestMs / cli.importsPostFirstRequestMs : Number.NaN
  mark(has(first) ? first <= COLD_START_TARGET : undefined, `cold start of \`rein run\`, spawn to its first request, ≤ ${COLD_START_TARGET}× \`node\` + imports: ${firstRequestText(cli, first)}`)
  lines.push('')
  return lines
}

/**
 * The issue puts `rein run`'s first request against "node + imports" (node importing the modules
 * rein run loads, then one POST); the ratios to bare node are given beside it, as that baseline
 * grows with whatever rein imports.
 */
function firstRequestText(/** @type {any} */ cli, /** @type {number} */ ratio) {
  if (!cli) return '—'
  const against = (/** @type {number | undefined} */ ms, /** @type {string} */ what) => ms ? `; ${fixed(cli.runFirstRequestMs / ms)}× ${what} (${fixed(ms, 1)} ms)` : ''
  return `${fixed(ratio)}× (${fixed(cli.runFirstRequestMs, 1)} ms against ${fixed(cli.importsPostFirstRequestMs, 1)} ms)`
    + against(cli.runNodeMs, "`node -e ''`") + against(cli.onePostFirstRequestMs, 'a bare `node` script sending one POST')
}

/** What each number means and how the loop is made. */
function meanings(/** @type {number} */ turns, /** @type {number} */ warmup) {
  return [
    '## What the numbers mean',
    '',
    '**The loop.** One mock OpenAI chat-completions server ([bench/loop/server.mjs](../bench/loop/server.mjs)), run inside the runner, serves every harness the same bytes over SSE: to a request ending with the user\'s message it streams 1 (A, B) or 3 (C) tool calls to `lookup`, to one ending with tool results a seven-chunk answer. Each turn is therefore user message → streamed tool call(s) → tool result(s) → streamed answer: two requests. The task, the tool (`lookup({key})` → `value of <key>`, trivial on purpose), the warm-up and the measured loop are shared by every harness ([bench/loop/common.mjs](../bench/loop/common.mjs)). A: each turn in a fresh conversation; B: all turns in one conversation whose history grows; C: each turn fresh, three parallel calls.',
    '',
    '**The harnesses.** The floor ([bench/loop/floor.mjs](../bench/loop/floor.mjs)) is the bare loop issue #16 names: `fetch`, eventsource-parser, `JSON.parse` per event, the calls assembled and called directly, history in an array; no validation, persistence or retries. It is not the least CPU a loop can take on Node 20: rein\'s adapter talks over `node:http`, which costs less per request than `fetch` (undici over web streams), so rein in memory can come out near or below it; the informational row *floor over node:http* ([bench/loop/floor-http.mjs](../bench/loop/floor-http.mjs)) is the same bare loop on rein\'s transport, and what rein adds over it is rein\'s own cost. The informational row *floor keeping a log* is the floor plus what a durable log needs and nothing more: a new file per conversation (its folder fsynced once) and the new messages appended as JSON lines where rein saves its log, fsynced where rein fsyncs it (before each request and at the end of the turn; before the tool bodies only written, as rein writes the intents of replay-safe calls such as the lookup); what it adds over the floor is what those fsyncs cost on the machine, whoever makes them. rein ([bench/loop/rein.mjs](../bench/loop/rein.mjs)) is composed in code from its built packages, its `lookup` tool declared pure (`effects: []`, so it is replay-safe: its intent is written, not fsynced, before its body) and concurrency-safe (so the calls of C run side by side, as the peers that run calls concurrently run them; it also makes their three intents one write, where a tool without the flag pays one each): durable = @rein/session-jsonl (each event fsynced before the request, written before a replay-safe tool body, in a temporary folder) + @rein/telemetry with @rein/otel-http exporting to a local OTLP capture in the runner; in-memory = sessions in memory, no telemetry; the two layer rows turn on one of the two. Peers ([bench/peers/](../bench/peers/), installed from their own lockfile by `npm ci` when needed, never by the workspace install) do the same loop with their own API; each file says what it turns on and off.',
    '',
    '**How it runs.** Every run is its own `node` process: `node <harness> <base-url with a run id> <A|B|C> <turns> [variant]`. Per repetition and scenario every harness runs once, in an order rotated each time, so a drift of the machine falls on all alike. A run counts only when it exits 0, prints its RESULT line, sent exactly 2 × (turns + ' + warmup + ') requests (its warm-up turns included) and every tool result was the one asked for; otherwise it is listed as failed with the end of its stderr.',
    '',
    `- **CPU ms/turn**: user + system CPU time of the harness process over the ${turns} measured turns and the close after them (where rein's telemetry exports the last spans and metrics the turns made), divided by the turns (the runner's server work is in another process and not counted). It includes V8's helper threads (garbage collection, compilation), so it can exceed the wall time. The optimizing compiler is still at work over these turns (it compiles each hot function on a helper thread), so a harness with more hot code pays more of it here than a longer run would per turn. The two rows *optimizing compiler off* run the floor and durable rein with \`node --no-opt\`: nothing is compiled by it in the window, so what they save against their default rows is mostly the compiler's work, and their ratio to each other is rein's cost run by V8's interpreter and baseline compiler alone. The two rows *inlining limited* keep the compiler on but let it inline at most 100 bytes of bytecode into each function it compiles (\`--max-inlined-bytecode-size-cumulative=100\`; V8's default is 920): what they save against their default rows is the compiler's work on inlined code, which in these runs bought the main thread nothing. The headline figure.`,
    '- **of it off the main thread**: the part of that CPU spent on threads other than the main one: the process\'s CPU less its main thread\'s, from /proc (Linux; — elsewhere). In profiles of these runs (perf) most of it was V8\'s optimizing compiler at work on hot functions; garbage collection helpers and the thread pool are the rest. It shows how much of a figure is code being compiled rather than run: compiled code only starts to pay back late in these turns. Ticks are 10 ms, so over 200 turns the figure moves in steps of 0.05 ms; the share is of the medians.',
    '- **wall ms/turn**: elapsed time over the measured turns per turn; includes the mock server\'s latency, the same for all.',
    '- **startup ms**: from the process\'s start (`performance.timeOrigin`) to the first request reaching the server: imports, composition, first request built.',
    '- **peak RSS MB**: the process\'s maximum resident set size (`process.resourceUsage().maxRSS`), in MiB.',
    `- **RSS growth MB**: RSS at the end minus RSS after measured turn 10 (MiB); what ${turns - 10} more turns kept in memory. Noisy (it depends on when the garbage collector last ran); no ratio when the floor grows by less than 1 MB or the figure is negative. Part of it can be V8 growing its young generation once enough objects have survived collections since it last grew, a step a run may or may not take within these turns: set it beside the live heap growth, what the turns really kept.`,
    '- **live heap growth MB**: the heap still reachable after a full collection (harnesses run with `--expose-gc`) at the end minus after measured turn 10: what the turns really kept. RSS growth above it is memory V8 and the allocator hold on to, not a leak. An in-memory session store keeps every session it was given, by design.',
    '- **prefix %**: for each request after the first of a conversation, the share of the previous request\'s prompt (rendered as a chat template would: tools, then each message\'s role, text, tool calls and call id) that the new one repeats as an exact prefix; mean and lowest over the run. 100 % means append-only, which provider KV caches reward.',
    '- **OTLP KiB/turn**: bytes the telemetry variants exported to the capture endpoint, per turn (warm-up included); shows telemetry was on.',
    '- **×**: the figure divided by the floor\'s median in the same scenario.',
    '- **per repetition**: in the CPU target, the lowest and highest of rein\'s CPU over the floor\'s within one repetition (the two ran in the same round, minutes apart at most): how much the machine moved the ratio from one round to the next.',
    '',
    '`pnpm bench` builds the packages, installs the peers if needed and runs everything (several minutes). `node bench/loop/run.mjs --quick` does 1 repetition of 50 turns; `--only rein,pi` (or `ONLY=`) runs a subset (the floor always runs); `TURNS=` / `--turns`, `REPS=` / `--reps` change the counts; `WARMUP=` / `--warmup` the unmeasured turns each run starts with (10; with 1 000 the figures show the steady state, once the compiler has done its work); `--no-extras` skips the micro benchmarks; `--no-write` leaves this file alone. `pnpm bench:micro` runs the micro benchmarks (bench/*.ts) with their own output.',
    '',
  ]
}

/** What the optimizing compiler did in one traced run of the floor and of durable rein per scenario. */
function compilerSection(/** @type {ReportInput} */ input) {
  const { compiler, scenarios } = input
  if (!compiler) return []
  const out = [`**The optimizing compiler** (bench/loop/compiler.mjs): two more runs of the floor and of durable rein per scenario, with \`--trace-opt --trace-deopt-verbose\` (not timed), one of ${input.turns} measured turns and one stopped after the first: the functions V8 compiled in the longer run and the time its compiler reported for them (on a machine otherwise idle, about the CPU it took), over the whole run (start and warm-up included), and in the measured turns after the first (the difference of the two runs, per turn: comparable with the CPU figures above, where it is counted); and every deoptimization outside Node's own modules.`, '']
  out.push(`| | ${scenarios.join(' | ')} |`, `|---|${scenarios.map(() => '---').join('|')}|`)
  const row = (/** @type {string} */ id, /** @type {string} */ label) => {
    const cells = scenarios.map((s) => {
      const trace = compiler[id]?.[s]
      if (!trace) return 'failed'
      const window = trace.firstTurnMs !== undefined && input.turns > 1 ? `; ${fixed((trace.compileMs - trace.firstTurnMs) / (input.turns - 1), 2)} ms per measured turn` : ''
      return `${trace.compiles} functions, ${fixed(trace.compileMs, 0)} ms${window}`
    })
    out.push(`| ${label} | ${cells.join(' | ')} |`)
  }
  row('floor', 'floor: compiled')
  row('rein', 'rein (session-jsonl + telemetry): compiled')
  out.push('')
  const deopts = scenarios.flatMap((s) => (compiler.rein?.[s]?.deopts ?? []).map((d) => `${s}: \`${d.fn}\` (${d.reason}) at ${d.at}`))
  out.push(deopts.length === 0 ? 'Deoptimizations in durable rein outside Node\'s modules: none.' : `Deoptimizations in durable rein outside Node's modules (each throws a compiled function away; the place is where it happened, which may be inlined into the function named):`, '')
  if (deopts.length > 0) out.push(...deopts.map((d) => `- ${d}`), '')
  return out
}
