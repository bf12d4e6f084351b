// Suite 7 (issue #17), leaks: markers planted in a prompt, the system prompt, tool arguments, a tool
// result, the model's answer, provider error bodies and the API key; real `rein run`, `rein resume`
// and a failing run, exporting to a local OTLP endpoint with captureContent off and then on; then
// every span, metric, output line and file rein wrote is searched. Content may be only where it
// belongs (the content stores, each 0600 in 0700 folders; the agent's own files; the terminal's
// answer, tool lines and errors); the key nowhere at all.
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, sep } from 'node:path'
import { startMockOpenAiServer, startOtlpCapture, type MockServer, type OtlpCapture } from '@rein/testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { broken, publish, type Figure } from '../src/figures.ts'
import { limit } from '../src/plan.ts'
import { killAll, runRein, type ReinExit } from '../src/rein-process.ts'
import { plantMarkers } from '../src/leaks/markers.ts'
import { leakyModel, agentFiles, SEED_FILE } from '../src/leaks/model.ts'
import { countDataPoints, countSpans, splitResources } from '../src/leaks/otlp-bodies.ts'
import { KEY_ENV, writeComposition } from '../src/leaks/composition.ts'
import { CONTENT_STORES, emptySweep, searchOutput, searchText, searchTree, type Place, type Sweep } from '../src/leaks/sweep.ts'

const markers = plantMarkers()
const m = markers.byName
const root = mkdtempSync(join(tmpdir(), 'rein-soak-leaks-'))
const closers: (() => Promise<void>)[] = []

afterAll(async () => {
  killAll()
  for (const close of closers) await close()
  rmSync(root, { recursive: true, force: true })
})

/** Where a file under REIN_HOME belongs (@rein/session-jsonl, @rein/checkpoint(-jsonl), @rein/memory-sqlite). */
function classifyHome(rel: string): Place {
  const parts = rel.split(sep)
  if (parts[0] === 'sessions' && parts.length === 2 && parts[1]!.endsWith('.jsonl')) return 'session log'
  if (parts[0] === 'sessions' && parts[1]?.endsWith('.files')) {
    if (parts[2] === 'spill') return 'spilled output'
    if (parts[2] === 'checkpoints.jsonl' || parts[2] === 'checkpoint-blobs') return 'checkpoint blob'
  }
  if (parts[0] === 'snapshots') return 'workspace snapshot'
  if (parts.length === 1 && /^memory\.db(-wal|-shm|-journal)?$/.test(parts[0]!)) return 'memory database'
  return 'anywhere else'
}

const agentWrote = new Set([...agentFiles('main'), ...agentFiles('capture')])

describe('7-leaks', () => {
  it('finds content only where it belongs, private, and the API key nowhere', { timeout: limit(120_000) }, async () => {
    const home = join(root, 'home')
    const user = join(root, 'user')
    const tmp = join(root, 'tmp')
    const work = join(root, 'work')
    const configs = join(root, 'config')
    for (const folder of [user, tmp, work, configs]) mkdirSync(folder, { mode: 0o700 })
    writeFileSync(join(work, SEED_FILE), `The answer to the build question is ${m.toolResult}.\n`)
    // rein's own tmpdir is `tmp`, so what it puts there is told apart from other suites' folders.
    // tsx (the loader that runs rein from sources here, not part of rein) keeps its cache there too:
    // the shared one is linked in, and not swept.
    const tsxCache = `tsx-${process.getuid?.() ?? 0}`
    if (existsSync(join(tmpdir(), tsxCache))) symlinkSync(join(tmpdir(), tsxCache), join(tmp, tsxCache))

    const server: MockServer = await startMockOpenAiServer(leakyModel(markers))
    closers.push(() => server.close())
    const off: OtlpCapture = await startOtlpCapture()
    const on: OtlpCapture = await startOtlpCapture()
    closers.push(() => off.close(), () => on.close())
    const system = `You are careful with secrets. ${m.system}`
    writeComposition(join(configs, 'off.yml'), { baseURL: server.url, otlp: off.url, captureContent: false, system })
    writeComposition(join(configs, 'on.yml'), { baseURL: server.url, otlp: on.url, captureContent: true, system })

    const env = { REIN_HOME: home, HOME: user, TMPDIR: tmp, [KEY_ENV]: markers.apiKey, LANG: 'C.UTF-8' }
    // The environment is built from nothing, so only what the suite sets reaches rein; a run that never ends is killed.
    const rein = (config: 'off' | 'on', args: string[]) => runRein({ cwd: work, args: ['--config', join(configs, `${config}.yml`), ...args], env, envOnly: true, guardMs: 60_000 })
    const processes: { label: string; run: ReinExit }[] = []

    const main = await rein('off', ['run', '--allow', 'write,exec', `Find out what the build uses. ${m.prompt}`])
    processes.push({ label: 'rein run (the main run)', run: main })
    const failing = await rein('off', ['run', '--verbose', `Try again. ${m.failingPrompt}`])
    processes.push({ label: 'rein run (the failing run)', run: failing })
    const failedId = /session (\S+)/.exec(failing.stderr)?.[1]
    const failedResume = await rein('off', ['resume', '--verbose', failedId ?? 'no-session-id', `Please continue. ${m.resumePrompt}`])
    processes.push({ label: 'rein resume (failing again)', run: failedResume })
    const resumed = await rein('off', ['resume', failedId ?? 'no-session-id'])
    processes.push({ label: 'rein resume (to the end)', run: resumed })
    const capture = await rein('on', ['run', '--verbose', '--allow', 'write,exec', `Find out again. ${m.capturePrompt}`])
    processes.push({ label: 'rein run (captureContent on)', run: capture })

    // The runs did what the suite planted: otherwise there would be nothing to find.
    const said = (run: ReinExit) => `exit ${run.code ?? run.signal}\n--- stdout\n${run.stdout}--- stderr\n${run.stderr}`
    expect(main.code, `${said(main)}`).toBe(0)
    expect(failing.code, `${said(failing)}`).not.toBe(0)
    expect(failedId, `${said(failing)}`).toBeDefined()
    expect(failedResume.code, `${said(failedResume)}`).not.toBe(0)
    expect(resumed.code, `${said(resumed)}`).toBe(0)
    expect(capture.code, `${said(capture)}`).toBe(0)
    expect(server.requests.every((request) => request.headers.authorization === `Bearer ${markers.apiKey}`)).toBe(true)
    // The bash call listed its environment, so a key passed down to commands would have been seen.
    expect(server.requests.some((request) => request.raw.includes('REIN_BASH_CALL='))).toBe(true)

    const sweep: Sweep = emptySweep()
    const spansWith = { off: 0, on: 0 }
    for (const { label, run } of processes) {
      searchOutput(sweep, markers, label, 'stdout', run.stdout)
      searchOutput(sweep, markers, label, 'stderr', run.stderr)
    }
    for (const [capture, content] of [[off, 'off'], [on, 'on']] as const) {
      capture.requests.forEach((exported, index) => {
        sweep.exports++
        const traces = exported.path === '/v1/traces'
        if (traces) spansWith[content] += countSpans(exported.body)
        else sweep.metricPoints += countDataPoints(exported.body)
        const where = `OTLP export ${index + 1} to ${exported.path} (captureContent ${content})`
        const { resources, rest } = splitResources(exported.body)
        const place = (signal: 'span' | 'metric'): Place => `${signal} (captureContent ${content})`
        searchText(sweep, markers, `${where}, resource`, content === 'on' ? 'OTLP resource (captureContent on)' : place(traces ? 'span' : 'metric'), [Buffer.from(resources)])
        searchText(sweep, markers, where, place(traces ? 'span' : 'metric'), [Buffer.from(rest)])
      })
    }
    sweep.spans = spansWith.off + spansWith.on
    // Both endpoints got spans, and the search sees content in them when content is exported: so
    // finding none with captureContent off means something.
    expect(spansWith.off).toBeGreaterThan(0)
    expect(spansWith.on).toBeGreaterThan(0)
    expect([...sweep.foundInPlace.get('capturePrompt') ?? []]).toContain('span (captureContent on)')
    server.requests.forEach((request, index) => {
      searchText(sweep, markers, `body of request ${index + 1} to the provider`, 'request to the provider', [Buffer.from(request.raw)])
    })
    searchTree(sweep, markers, { label: 'REIN_HOME', path: home, classify: classifyHome, private: true })
    searchTree(sweep, markers, {
      label: 'workspace', path: work, private: false,
      classify: (rel) => rel === SEED_FILE ? 'file the suite planted' : agentWrote.has(rel) ? 'workspace file the agent wrote' : 'anywhere else',
    })
    searchTree(sweep, markers, { label: 'TMPDIR', path: tmp, classify: () => 'anywhere else', private: true, skip: (rel) => rel === tsxCache })
    searchTree(sweep, markers, { label: 'HOME', path: user, classify: () => 'anywhere else', private: true })
    // The folder of the cordis.yml files (which the suite wrote, and which hold the system prompt).
    searchTree(sweep, markers, { label: 'config folder', path: configs, classify: () => 'anywhere else', private: false, skip: (rel) => rel.endsWith('.yml') })

    const storesHolding = CONTENT_STORES.filter((place) => [...sweep.foundInPlace.values()].some((places) => places.has(place)))
    const unfound = markers.all.filter((marker) => !sweep.foundInPlace.has(marker.name)).map((marker) => marker.name)
    const figures: Figure[] = [
      { label: 'places searched: files rein wrote (REIN_HOME, workspace, TMPDIR, HOME, config folder)', value: sweep.files },
      { label: 'places searched: OTLP spans', value: sweep.spans },
      { label: 'places searched: OTLP metric data points', value: sweep.metricPoints },
      { label: `places searched: stdout and stderr lines of ${processes.length} processes`, value: sweep.lines },
      { label: 'markers planted that were found where they belong', value: markers.all.length - unfound.length, must: markers.all.length },
      { label: `content stores seen holding content (${CONTENT_STORES.join(', ')})`, value: storesHolding.length, must: CONTENT_STORES.length },
      { label: 'content markers outside their places', value: sweep.misplaced.length, must: 0 },
      { label: 'API key hits (files, output lines, OTLP exports, requests holding it)', value: sweep.keyHits.length, must: 0 },
      { label: 'files holding content with a wrong mode (0600 file, 0700 folders)', value: sweep.wrongModes.length, must: 0 },
    ]
    publish({
      id: '7-leaks',
      title: 'Leaks: content stays in its places, the API key nowhere',
      ran: `${processes.length} real processes from sources: \`rein run\` calling write, bash (its output spilled, the environment listed), read (once failing), memory_write and a bash that times out, with markers in every argument; \`rein run\` failing on a 401 that echoes the key; \`rein resume\` of it failing on a stream event that is the key; \`rein resume\` again through a 500 and an in-stream error that echo the key; the first run again with captureContent on, through the same two errors. ${markers.all.length} content markers and the key searched in ${sweep.files} files (${sweep.bytes} bytes, under REIN_HOME, the workspace, TMPDIR and HOME), ${sweep.spans} spans and ${sweep.metricPoints} metric points in ${sweep.exports} OTLP exports, ${server.requests.length} requests to the provider and ${sweep.lines} lines of stdout and stderr`,
      figures,
      promise: 'Prompts, tool arguments and results, answers and provider error text are written only to the session log, spilled outputs, checkpoint blobs and snapshots and the memory database, each a 0600 file in 0700 folders (and to the terminal: the answer, the tool lines, why a turn failed), and leave as telemetry only with captureContent on; the API key is in no file, span, metric, output line or error message.',
    })
    const details = [
      ...sweep.misplaced.map((hit) => `misplaced ${hit.what} in ${hit.place}: ${hit.where}`),
      ...sweep.keyHits.map((hit) => `API key in ${hit.place}: ${hit.where}`),
      ...sweep.wrongModes.map((wrong) => `mode: ${wrong}`),
      ...unfound.map((name) => `never found where it belongs: ${name}`),
      ...CONTENT_STORES.filter((place) => !storesHolding.includes(place)).map((place) => `no content found in any ${place}`),
    ]
    expect(broken(figures), `${details.join('\n')}`).toEqual([])
  })
})
