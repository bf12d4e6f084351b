/**
 * Start-up cost of the built `rein` command, each a fresh process, median wall time over many runs:
 * - `rein --help` and `rein sessions --help` against `node -e ''` (commands load lazily);
 * - `rein run "hi"` with a cordis.yml (llm, llm-openai pointed at a local mock server that answers
 *   at once, tools, session + session-jsonl, agent) against `node -e ''` spawned the same way: the
 *   time from spawn to the first request reaching the server (imports, composition, session
 *   created and flushed, request built) and to the process's exit (the whole one-turn run); and
 *   a bare `node` script sending one POST over node:http, the least a process that sends a request pays;
 *   and `node` importing every ES module `rein run` has loaded by its first request, then sending
 *   one POST: issue #16's "node + imports", what is left of rein's first request once its code is
 *   loaded (a baseline that grows with rein's imports: the ratios to `node -e ''` stay beside it);
 * - the same `rein run` with every package examples/cordis.yml composes (memory-sqlite, checkpoint,
 *   tool-fs, jobs, tool-bash, telemetry + otel-http exporting to a local endpoint): what a full
 *   composition adds, informational.
 * Run: pnpm bench:micro (it builds first). `REIN_BIN` measures another build of the command. With
 * BENCH_JSON=1 it prints one line `BENCH_JSON {…}` (milliseconds) instead (bench/loop/run.mjs reads it).
 */

import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { startMockOpenAiServer } from '@rein/testkit'
import { measure, report } from './measure.ts'

const bin = process.env.REIN_BIN ?? fileURLToPath(new URL('../packages/app/cli/dist/bin.mjs', import.meta.url))
const json = process.env.BENCH_JSON === '1'
const run = (args: string[]) => () => {
  const child = spawnSync(process.execPath, args, { stdio: 'ignore' })
  if (child.status !== 0) throw new Error(`${args.join(' ')} exited ${String(child.status)}`)
}

const options = { iterations: 5, rounds: 9, warmup: 3 }
const bare = await measure("node -e ''", run(['-e', '']), options)
const help = await measure('rein --help', run([bin, '--help']), options)
const sessions = await measure('rein sessions --help', run([bin, 'sessions', '--help']), options)
if (!json) report('cli-startup: one process start (median of 9 rounds x 5)', bare, [help, sessions])

// `rein run`: the parent must stay free to answer, so the children are spawned asynchronously.
let firstRequestAt = 0
/** Called once, when a run's first request arrives (the recording of what rein run imports). */
let atFirstRequest: (() => void) | undefined
let importedModules = 0
const server = await startMockOpenAiServer(() => {
  if (!firstRequestAt) {
    firstRequestAt = performance.now()
    atFirstRequest?.()
  }
  return { steps: [{ text: 'done' }] }
})
const dir = mkdtempSync(join(tmpdir(), 'rein-bench-cli-'))
const config = join(dir, 'cordis.yml')
writeFileSync(config, [
  "- { id: llm, name: '@rein/llm' }",
  `- { id: openai, name: '@rein/llm-openai', config: { baseURL: '${server.url}', apiKeyEnv: false, models: [{ id: bench-model, contextWindow: 128000 }] } }`,
  "- { id: tools, name: '@rein/tools' }",
  "- { id: sessions, name: '@rein/session' }",
  "- { id: session-store, name: '@rein/session-jsonl' }",
  "- { id: agents, name: '@rein/agent', config: { provider: openai, model: bench-model } }",
  '',
].join('\n'))

// Every package examples/cordis.yml composes; otel-http exports to an endpoint here that says OK.
const otlp = createServer((request, response) => { request.resume(); request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}')) })
await new Promise<void>((resolve) => otlp.listen(0, '127.0.0.1', resolve))
const every = join(dir, 'every.yml')
writeFileSync(every, [
  readFileSync(config, 'utf8').trimEnd(),
  "- { id: memory, name: '@rein/memory' }",
  "- { id: memory-store, name: '@rein/memory-sqlite' }",
  "- { id: checkpoint, name: '@rein/checkpoint' }",
  "- { id: checkpoint-store, name: '@rein/checkpoint-jsonl' }",
  "- { id: fs, name: '@rein/tool-fs' }",
  "- { id: jobs, name: '@rein/jobs' }",
  "- { id: bash, name: '@rein/tool-bash' }",
  "- { id: telemetry, name: '@rein/telemetry' }",
  `- { id: otel, name: '@rein/otel-http', config: { endpoint: 'http://127.0.0.1:${(otlp.address() as AddressInfo).port}' } }`,
  '',
].join('\n'))

/** One process, spawned without blocking: milliseconds to the first request (if any) and to its exit. */
async function timed(args: string[], home: string) {
  mkdirSync(home, { recursive: true })
  firstRequestAt = 0
  const start = performance.now()
  const child = spawn(process.execPath, args, { cwd: dir, env: { ...process.env, REIN_HOME: home, NO_COLOR: '1' }, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (part: Buffer) => { stderr += part.toString() })
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  const exitMs = performance.now() - start
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${String(code)}: ${stderr.slice(-500)}`)
  return { firstRequestMs: firstRequestAt ? firstRequestAt - start : Number.NaN, exitMs }
}

// The least a process that sends one request pays: node, node:http, one POST.
const onePost = join(dir, 'one-post.mjs')
writeFileSync(onePost, "import { request } from 'node:http'\nrequest(process.argv[2], { method: 'POST' }, (response) => response.resume()).end('{}')\n")

// Issue #16's baseline for the first request: `node` plus the imports.
const importsThenPost = await recordImports()

/**
 * Records the ES modules `rein run` has loaded when its first request arrives (a loader hook in the
 * child), and writes a script that imports them all, as the loader would, then sends one POST.
 * The entry (bin.mjs, whose top level runs the command) is left out: with a `REIN_BIN` that bundles
 * everything into it, the baseline is node alone. Files loaded with `require` are not seen by the
 * hook on Node 20; those a recorded module requires at its top level load with it anyway.
 */
async function recordImports(): Promise<string> {
  const list = join(dir, 'loaded.txt')
  const hooks = join(dir, 'record-hooks.mjs')
  writeFileSync(hooks, `import { appendFileSync } from 'node:fs'\nexport async function load(url, context, next) {\n  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(list)}, url + '\\n')\n  return next(url, context)\n}\n`)
  const recorder = join(dir, 'record.mjs')
  writeFileSync(recorder, `import { register } from 'node:module'\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`)
  let recorded = ''
  atFirstRequest = () => { recorded = readFileSync(list, 'utf8') }
  await timed(['--import', pathToFileURL(recorder).href, bin, '--config', config, 'run', 'hi'], join(dir, 'home-record'))
  atFirstRequest = undefined
  // Node records the entry by its real path (a global `rein` is a symlink).
  const entry = pathToFileURL(realpathSync(bin)).href
  const urls = [...new Set(recorded.split('\n'))].filter((url) => url && url !== entry)
  if (urls.length < 5) throw new Error(`recording what rein run loads found only ${urls.length} modules`)
  importedModules = urls.length
  const script = join(dir, 'imports-then-post.mjs')
  writeFileSync(script, `import { request } from 'node:http'\nawait Promise.all(${JSON.stringify(urls)}.map((url) => import(url)))\nrequest(process.argv[2], { method: 'POST' }, (response) => response.resume()).end('{}')\n`)
  return script
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const ROUNDS = 9
const nodeExit: number[] = []
const postFirst: number[] = []
const importsFirst: number[] = []
const runFirst: number[] = []
const runExit: number[] = []
const everyFirst: number[] = []
const everyExit: number[] = []
let everyFailed = false
for (let round = -1; round < ROUNDS; round++) {
  const node = await timed(['-e', ''], join(dir, 'home'))
  const post = await timed([onePost, `${server.url}/chat/completions`], join(dir, 'home'))
  const imports = await timed([importsThenPost, `${server.url}/chat/completions`], join(dir, 'home'))
  const rein = await timed([bin, '--config', config, 'run', 'hi'], join(dir, `home-${round}`))
  if (Number.isNaN(post.firstRequestMs)) throw new Error('the one-POST script made no request')
  if (Number.isNaN(imports.firstRequestMs)) throw new Error('the imports-then-POST script made no request')
  if (Number.isNaN(rein.firstRequestMs)) throw new Error('rein run made no request')
  // Informational: a failure here (better-sqlite3 not built, an older REIN_BIN) leaves the rest standing.
  const full = everyFailed ? undefined : await timed([bin, '--config', every, 'run', 'hi'], join(dir, `home-every-${round}`)).catch((error: unknown) => {
    everyFailed = true
    console.error(`cli-startup: rein run with every package failed, left out: ${String(error)}`)
    return undefined
  })
  if (round < 0) continue // warm-up: the file cache
  nodeExit.push(node.exitMs)
  postFirst.push(post.firstRequestMs)
  importsFirst.push(imports.firstRequestMs)
  runFirst.push(rein.firstRequestMs)
  runExit.push(rein.exitMs)
  if (full && !Number.isNaN(full.firstRequestMs)) {
    everyFirst.push(full.firstRequestMs)
    everyExit.push(full.exitMs)
  }
}
await server.close()
otlp.close()
rmSync(dir, { recursive: true, force: true })

const nodeMs = median(nodeExit)
if (json) {
  const ms = (ns: number) => ns / 1e6
  console.log(`BENCH_JSON ${JSON.stringify({
    nodeMs: ms(bare.nsPerOp), helpMs: ms(help.nsPerOp), sessionsHelpMs: ms(sessions.nsPerOp),
    runNodeMs: nodeMs, onePostFirstRequestMs: median(postFirst), importsPostFirstRequestMs: median(importsFirst), importedModules, runFirstRequestMs: median(runFirst), runExitMs: median(runExit),
    ...(everyFirst.length > 0 ? { everyFirstRequestMs: median(everyFirst), everyExitMs: median(everyExit) } : {}),
  })}`)
} else {
  console.log(`\ncli-startup: rein run "hi" against a local mock server, spawned asynchronously (median of ${ROUNDS})`)
  console.log(`  ${"node -e ''".padEnd(44)} ${nodeMs.toFixed(1).padStart(9)} ms     1.0x`)
  for (const [name, value] of [['node, one POST: spawn to the request', median(postFirst)], [`node + rein run's ${importedModules} modules, one POST`, median(importsFirst)], ['rein run: spawn to first request', median(runFirst)], ['rein run: spawn to exit (whole turn)', median(runExit)], ...(everyFirst.length > 0 ? [['rein run, every package: to first request', median(everyFirst)], ['rein run, every package: to exit', median(everyExit)]] as const : [])] as const) {
    console.log(`  ${name.padEnd(44)} ${value.toFixed(1).padStart(9)} ms  ${`${(value / nodeMs).toFixed(1)}x`.padStart(7)}`)
  }
  console.log(`  rein run's first request over node + its imports: ${(median(runFirst) / median(importsFirst)).toFixed(2)}x`)
}
