/**
 * Checkpoint figures the undo design promises, on the real file system:
 * - a 100 000-file workspace: the first snapshot (time, and the size of the shared store) and the
 *   cost a snapshot adds around a command that changes nothing (against running the command bare);
 * - rewinding a turn that wrote 1 000 files (checkpoint-jsonl, fsync on every record);
 * - the checkpoint log and contents for 1 000 edits of one 100 KB file.
 * Run: pnpm bench, or `pnpm --filter rein-bench exec tsx checkpoint.ts` (FILES=20000 for a quicker run).
 */

import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import CheckpointService from '@rein/checkpoint'
import { JsonlCheckpointStore } from '@rein/checkpoint-jsonl'
import ToolService, { defineTool, type RunIdentity } from '@rein/tools'

const FILES = Number(process.env.FILES ?? 100_000)
const scratch = mkdtempSync(join(tmpdir(), 'rein-bench-checkpoint-'))
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }))

/** Stores to close at the end, so no log handle is left to the garbage collector. */
const stores: JsonlCheckpointStore[] = []

const identity: RunIdentity = { agent: 'main', sessionId: 's1', conversationId: 's1', runId: 'r1', turnId: 's1/1', anchor: 'm1', depth: 0 }

const sh = defineTool({
  name: 'sh',
  description: 'Runs a shell command.',
  parameters: { command: { type: 'string', required: true } },
  output: { schema: { type: 'json' }, render: () => 'ran' },
  effects: ['exec'],
  execute: (args, run) => {
    execFileSync('sh', ['-c', args.command], { cwd: run.cwd })
    return null
  },
})

async function composition(name: string, snapshot: boolean) {
  const ctx = new Context()
  await ctx.plugin(ToolService, { askFor: [] })
  await ctx.plugin(CheckpointService, { snapshot: { enabled: snapshot, folder: join(scratch, `${name}-snapshots`) } })
  const sessions = join(scratch, `${name}-sessions`)
  const store = new JsonlCheckpointStore({ folder: async (id) => (mkdirSync(join(sessions, id), { recursive: true }), join(sessions, id)) })
  ctx.checkpoints.registerStore(store)
  ctx.tools.register(sh)
  stores.push(store)
  return { ctx, sessions }
}

function makeWorkspace(files: number): string {
  const root = join(scratch, 'workspace')
  for (let index = 0; index < files; index++) {
    const folder = join(root, `d${Math.floor(index / 10_000)}`, `s${Math.floor(index / 100)}`)
    if (index % 100 === 0) mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, `f${index}.ts`), `export const value${index} = ${index}\n`.repeat(20))
  }
  return root
}

function folderBytes(folder: string): number {
  let total = 0
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size
  }
  return total
}

const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9
const mib = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`

async function timeCall(ctx: Context, workspace: string, command: string, runs: number): Promise<number> {
  const samples: number[] = []
  for (let index = 0; index < runs; index++) {
    const start = process.hrtime.bigint()
    const result = await ctx.tools.execute({
      callId: `c${index}`, name: 'sh', arguments: JSON.stringify({ command }), signal: new AbortController().signal,
      context: { cwd: workspace, workspaceRoot: workspace, sessionId: 's1', identity },
    })
    if (result.isError) throw new Error(result.error.message)
    samples.push(seconds(start))
  }
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)] ?? 0
}

async function snapshotFigures() {
  const workspace = makeWorkspace(FILES)
  const covered = await composition('covered', true)
  const bare = await composition('bare', false)
  const start = process.hrtime.bigint()
  await timeCall(covered.ctx, workspace, 'true', 1)
  const first = seconds(start)
  const store = folderBytes(join(scratch, 'covered-snapshots'))
  const withSnapshot = await timeCall(covered.ctx, workspace, 'true', 5)
  const without = await timeCall(bare.ctx, workspace, 'true', 5)
  console.log(`\nsnapshot of a ${FILES}-file workspace (${mib(folderBytes(workspace))} of content)`)
  console.log(`  first snapshot (walk, hash, store every file)   ${first.toFixed(2)} s, store ${mib(store)}`)
  console.log(`  command that changes nothing, bare               ${(without * 1000).toFixed(0)} ms`)
  console.log(`  same command with the two walks around it        ${(withSnapshot * 1000).toFixed(0)} ms  (${(withSnapshot / without).toFixed(1)}x; +${((withSnapshot - without) * 1000).toFixed(0)} ms)`)
}

async function rewindFigures() {
  const { ctx } = await composition('rewind', false)
  const root = join(scratch, 'rewind-workspace')
  mkdirSync(root)
  for (let index = 0; index < 1000; index++) {
    const path = `f${index}.txt`
    const before = Buffer.from(`before ${index}\n`)
    writeFileSync(join(root, path), before)
    await ctx.checkpoints.record('s1', { anchor: 'm1', root, path, existed: true, before, after: Buffer.from(`after ${index}\n`) })
    writeFileSync(join(root, path), `after ${index}\n`)
  }
  const start = process.hrtime.bigint()
  const result = await ctx.checkpoints.rewind('s1', 'm1')
  const took = seconds(start)
  console.log('\nrewind of a turn that wrote 1 000 files (checkpoint-jsonl)')
  console.log(`  ${result.restored.length} restored in ${(took * 1000).toFixed(0)} ms (${(took * 1e6 / 1000).toFixed(0)} µs a file)`)
}

async function logSizeFigures() {
  const { ctx, sessions } = await composition('log', false)
  const root = join(scratch, 'log-workspace')
  mkdirSync(root)
  // About 100 KB, and it stays so: an edit rewrites a line with one of the same length.
  const lines = Array.from({ length: 1900 }, (_, index) => `line ${String(index).padStart(4, '0')}: ${'x'.repeat(42)}`)
  let current = Buffer.from(lines.join('\n'))
  for (let edit = 0; edit < 1000; edit++) {
    lines[edit % lines.length] = `line ${String(edit).padStart(4, '0')}: ${`edited ${edit}`.padEnd(42, '.')}`
    const next = Buffer.from(lines.join('\n'))
    await ctx.checkpoints.record('s1', { anchor: `m${edit}`, root, path: 'big.txt', existed: true, before: current, after: next })
    current = next
  }
  console.log(`\ncheckpoint log for 1 000 edits of one ${(current.length / 1024).toFixed(0)} KB file`)
  console.log(`  log and contents: ${mib(folderBytes(join(sessions, 's1')))}`)
}

await snapshotFigures()
await rewindFigures()
await logSizeFigures()
await Promise.all(stores.map((store) => store.close()))
