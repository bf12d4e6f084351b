/**
 * Target (a): generated and damaged SSE byte streams into both adapters over a real socket. Every
 * stream must end in a finish or a typed failure (a ReinError with a code): never a stray throw,
 * never a hang.
 */

import type { Context } from '@deepseek-ai/cordis'
import type { LlmAdapter } from '@rein/llm'
import { rng } from '../plan.ts'
import { startByteServer, type ByteServer } from './byte-server.ts'
import { saveInput, savedInputs, shrink } from './corpus.ts'
import { streamCase, type Served } from './sse-streams.ts'
import { pluginAdapters, runtimeContext, throughAdapter, throughRuntime, type Route, type StreamOutcome } from './stream-runner.ts'

export interface SseFigures {
  streams: number
  /** Streams by route and path. */
  byPath: Record<string, number>
  finished: number
  typedFailures: number
  /** Streams that threw something other than a ReinError with a code (or that the runtime saw as TRANSPORT). */
  stray: number
  hangs: number
  unfinished: number
  /** Of the streams, how many carried each damage kind. */
  damage: Record<string, number>
  replayed: number
  saved: string[]
  examples: string[]
  ms: number
  /** CPU time this process spent (both sides of the socket), ms. */
  cpuMs: number
}

interface Rig {
  server: ByteServer
  adapters: Record<Route, LlmAdapter>
  root: Context
  next: number
}

async function rig(): Promise<Rig> {
  const server = await startByteServer()
  return { server, adapters: pluginAdapters(server.url), root: await runtimeContext(server.url), next: 0 }
}

type Path = { route: Route; runtime: boolean }

async function runOne(rig: Rig, served: Served, path: Path): Promise<StreamOutcome> {
  const n = rig.next++
  rig.server.serve(n, served)
  return path.runtime ? throughRuntime(rig.root, path.route, n) : throughAdapter(rig.adapters[path.route], path.route, n)
}

const bad = (outcome: StreamOutcome) => outcome.kind === 'stray' || outcome.kind === 'hang' || outcome.kind === 'unfinished'

/** A saved stream: its status, content type, ending and pieces (base64). */
interface SavedStream {
  status: number
  contentType?: string
  end: Served['end']
  giantLine?: number
  chunks: string[]
}

const toSaved = (served: Served): SavedStream => ({ ...served, chunks: served.chunks.map((chunk) => Buffer.from(chunk).toString('base64')) })
const fromSaved = (saved: SavedStream): Served => ({ ...saved, chunks: saved.chunks.map((chunk) => Uint8Array.from(Buffer.from(chunk, 'base64'))) })

/** Runs `count` generated streams (seeded) and every saved one, `concurrency` at a time. */
export async function fuzzSse(seed: number, count: number, concurrency = 16): Promise<SseFigures> {
  const started = Date.now()
  const cpu = process.cpuUsage()
  const figures: SseFigures = { streams: 0, byPath: {}, finished: 0, typedFailures: 0, stray: 0, hangs: 0, unfinished: 0, damage: {}, replayed: 0, saved: [], examples: [], ms: 0, cpuMs: 0 }
  const r = rng(seed)
  const seen = new Set<string>()
  const rigged = await rig()
  const record = async (served: Served, path: Path, outcome: StreamOutcome, save: boolean) => {
    const key = `${path.route}${path.runtime ? '+runtime' : ''}`
    figures.byPath[key] = (figures.byPath[key] ?? 0) + 1
    if (outcome.kind === 'finish') figures.finished++
    else if (outcome.kind === 'failure') figures.typedFailures++
    else if (outcome.kind === 'stray') figures.stray++
    else if (outcome.kind === 'hang') figures.hangs++
    else figures.unfinished++
    if (!bad(outcome)) return
    if (figures.examples.length < 5) figures.examples.push(`${key}: ${JSON.stringify(outcome).slice(0, 600)}`)
    // One saved input per kind of problem and run (the first line of what escaped, digits masked).
    const kind = `${outcome.kind}:${'error' in outcome ? outcome.error.split('\n')[0]!.replace(/\d+/g, 'N').slice(0, 100) : 'detail' in outcome ? outcome.detail : ''}`
    if (!save || seen.has(kind)) return
    seen.add(kind)
    const small = await shrink(served.chunks, (chunks) => chunks.length, (chunks, from, to) => [...chunks.slice(0, from), ...chunks.slice(to)],
      async (chunks) => bad(await runOne(rigged, { ...served, chunks }, path)), 150)
    figures.saved.push(saveInput('sse', `${key}-${outcome.kind}`, JSON.stringify({ ...toSaved({ ...served, chunks: small }), path }, null, 1), '.json'))
  }
  try {
    // Saved inputs first: each through every path.
    for (const { bytes } of savedInputs('sse')) {
      const saved = JSON.parse(bytes.toString('utf8')) as SavedStream
      for (const path of REPLAY_PATHS) {
        const served = fromSaved(saved)
        await record(served, path, await runOne(rigged, served, path), false)
        figures.replayed++
      }
    }
    let issued = 0
    const worker = async () => {
      while (issued < count) {
        const i = issued++
        const path = PATHS[i % PATHS.length]!
        const generated = streamCase(r, path.route === 'deepseek')
        for (const kind of generated.damage) figures.damage[kind] = (figures.damage[kind] ?? 0) + 1
        figures.streams++
        await record(generated.served, path, await runOne(rigged, generated.served, path), true)
      }
    }
    await Promise.all(Array.from({ length: concurrency }, worker))
  } finally {
    await rigged.server.close()
  }
  figures.ms = Date.now() - started
  const used = process.cpuUsage(cpu)
  figures.cpuMs = Math.round((used.user + used.system) / 1000)
  return figures
}

/** Seven in eight streams go to an adapter directly (every throw visible), one in eight through the runtime. */
const PATHS: readonly Path[] = Array.from({ length: 16 }, (_, i) => ({ route: i % 2 === 0 ? 'openai' : 'deepseek', runtime: i === 7 || i === 14 }))

/** A saved stream is replayed through each adapter directly and through the runtime. */
const REPLAY_PATHS: readonly Path[] = [
  { route: 'openai', runtime: false },
  { route: 'deepseek', runtime: false },
  { route: 'openai', runtime: true },
  { route: 'deepseek', runtime: true },
]
