/**
 * The search: every file under the folders rein may write to (read as bytes; a checkpoint blob
 * rein compressed is searched decompressed too), every line a process printed and every OTLP body,
 * each classified as a place, each marker found checked against the places it may be in.
 */

import { lstatSync, readdirSync, readFileSync, type Stats } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { brotliDecompressSync } from 'node:zlib'
import type { Marker, MarkerKind, Markers } from './markers.ts'

/**
 * Where a marker was found. The content stores are where content belongs (and must be private);
 * the workspace files are the agent's work; the terminal shows the answer, the tool calls and why a
 * turn failed; telemetry carries content only when asked to.
 */
export type Place =
  | 'session log' | 'spilled output' | 'checkpoint blob' | 'workspace snapshot' | 'memory database'
  | 'workspace file the agent wrote' | 'file the suite planted'
  | 'stdout' | 'stderr [tool] line' | 'stderr'
  | 'span (captureContent off)' | 'span (captureContent on)' | 'metric (captureContent off)' | 'metric (captureContent on)'
  | 'OTLP resource (captureContent on)'
  | 'request to the provider'
  | 'anywhere else'

/** The places that are rein's content stores: 0600 files in 0700 folders, each checked. */
export const CONTENT_STORES: readonly Place[] = ['session log', 'spilled output', 'checkpoint blob', 'workspace snapshot', 'memory database']

const EVERY_KIND: readonly MarkerKind[] = ['input', 'argument', 'result', 'answer', 'provider-echo']

/** Which kinds of marker may be found in a place (the API key may be in none). */
function allowedKinds(place: Place): readonly MarkerKind[] {
  if (CONTENT_STORES.includes(place)) return EVERY_KIND
  switch (place) {
    case 'workspace file the agent wrote': return ['argument']
    case 'file the suite planted': return ['result']
    case 'stdout': return ['answer']
    case 'stderr [tool] line': return ['argument']
    case 'stderr': return ['provider-echo']
    case 'span (captureContent on)': return EVERY_KIND
    // The conversation is what a provider is sent; only the key is never in a body.
    case 'request to the provider': return EVERY_KIND
    // otel-http adds the process detector with content: `process.command_args` holds the prompt.
    case 'OTLP resource (captureContent on)': return ['input']
    default: return []
  }
}

/** What the suite searched, and what it found. */
export interface Sweep {
  files: number
  bytes: number
  spans: number
  metricPoints: number
  exports: number
  lines: number
  /** A content marker outside the places it may be in. */
  misplaced: Finding[]
  /** The API key (or its secret tail) anywhere. */
  keyHits: Finding[]
  /** A file holding content (or in a content store) whose mode, or a folder's above it, is not private. */
  wrongModes: string[]
  /** Every marker found in a place it may be in: name → places. */
  foundInPlace: Map<string, Set<Place>>
}

/** One hit: where it was, what kind of place that is, and what was found. */
interface Finding {
  readonly where: string
  readonly place: Place
  readonly what: string
}

/** A sweep that has searched nothing yet. */
export function emptySweep(): Sweep {
  return { files: 0, bytes: 0, spans: 0, metricPoints: 0, exports: 0, lines: 0, misplaced: [], keyHits: [], wrongModes: [], foundInPlace: new Map() }
}

/** Checks one text (or bytes) found at `where`, a `place`, against every marker and the key. */
export function searchText(sweep: Sweep, markers: Markers, where: string, place: Place, texts: readonly Buffer[]): Marker[] {
  const found: Marker[] = []
  for (const marker of markers.all) {
    if (!texts.some((text) => text.includes(marker.text))) continue
    found.push(marker)
    if (allowedKinds(place).includes(marker.kind)) {
      const places = sweep.foundInPlace.get(marker.name) ?? new Set<Place>()
      places.add(place)
      sweep.foundInPlace.set(marker.name, places)
    } else sweep.misplaced.push({ where, place, what: `${marker.name} (${marker.kind})` })
  }
  if (texts.some((text) => text.includes(markers.apiKey) || text.includes(markers.apiKeyTail))) {
    sweep.keyHits.push({ where, place, what: 'the API key' })
  }
  return found
}

/** Searches a process's output line by line: stdout, stderr (`[tool]` lines apart). */
export function searchOutput(sweep: Sweep, markers: Markers, label: string, stream: 'stdout' | 'stderr', text: string): void {
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  lines.forEach((line, index) => {
    sweep.lines++
    const place: Place = stream === 'stdout' ? 'stdout' : /^\s*\[tool\] /.test(line) ? 'stderr [tool] line' : 'stderr'
    searchText(sweep, markers, `${stream} of ${label}, line ${index + 1}: ${line.slice(0, 160)}`, place, [Buffer.from(line)])
  })
}

/** A folder the sweep walks: `classify` names the place of each file in it by its relative path. */
export interface SweptRoot {
  readonly label: string
  readonly path: string
  readonly classify: (relativePath: string) => Place
  /** Check modes (0600 files, 0700 folders up to and including the root) of files holding content. */
  readonly private: boolean
  /** Top-level entries not walked (what is not rein's, named in the report). */
  readonly skip?: (relativePath: string) => boolean
}

/** Walks `root` (never following a link), searching each regular file. */
export function searchTree(sweep: Sweep, markers: Markers, root: SweptRoot): void {
  for (const file of walk(root.path, root.path, root.skip)) {
    const rel = relative(root.path, file.path)
    const bytes = readFileSync(file.path)
    sweep.files++
    sweep.bytes += bytes.length
    const place = root.classify(rel)
    const where = `${root.label}/${rel}`
    const found = searchText(sweep, markers, where, place, [bytes, ...decodedBlob(bytes)])
    const holdsSecret = sweep.keyHits.some((hit) => hit.where === where)
    if (!root.private || (found.length === 0 && !holdsSecret && !CONTENT_STORES.includes(place))) continue
    const wrong = wrongModes(root.path, rel, file.stats)
    if (wrong) sweep.wrongModes.push(`${where}: ${wrong}`)
  }
}

interface WalkedFile { path: string; stats: Stats }

function* walk(root: string, folder: string, skip?: (relativePath: string) => boolean): Generator<WalkedFile> {
  for (const name of readdirSync(folder).sort()) {
    const path = join(folder, name)
    if (skip?.(relative(root, path))) continue
    const stats = lstatSync(path)
    if (stats.isDirectory()) yield* walk(root, path, skip)
    else if (stats.isFile()) yield { path, stats }
  }
}

/** Why a file's mode or a folder's above it (up to the root) is not private; undefined when all are. */
function wrongModes(root: string, rel: string, stats: Stats): string | undefined {
  const problems: string[] = []
  if ((stats.mode & 0o777) !== 0o600) problems.push(`file mode ${octal(stats.mode)}`)
  const parts = rel.split(sep).slice(0, -1)
  for (let depth = parts.length; depth >= 0; depth--) {
    const folder = join(root, ...parts.slice(0, depth))
    const mode = lstatSync(folder).mode & 0o777
    if (mode !== 0o700) problems.push(`folder ${relative(root, folder) || '.'} mode ${octal(mode)}`)
  }
  return problems.length === 0 ? undefined : problems.join(', ')
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`

/**
 * A checkpoint blob (@rein/checkpoint-jsonl's blob-format.ts) starts with a magic and may hold its
 * content brotli-compressed: the payload, decompressed, is searched as well.
 */
const BLOB_MAGIC = Buffer.from([0x89, 0x52, 0x43, 0x4b, 0x42, 0x0d, 0x0a, 0x1a])

function decodedBlob(bytes: Buffer): Buffer[] {
  if (bytes.length < 18 || !bytes.subarray(0, 8).equals(BLOB_MAGIC) || bytes[10] !== 1) return []
  const header = bytes[9] === 1 ? 62 : 18
  try {
    return [brotliDecompressSync(bytes.subarray(header))]
  } catch {
    return []
  }
}
