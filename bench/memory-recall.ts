/**
 * Memory recall on a full database (memory-sqlite): 100 000 entries in a temp file, half the
 * user's and half spread over 10 projects, all types, English and some Chinese content. Times the
 * fill (one transaction per insert, as the service writes) and recall (limit 20, user + one
 * project) without a query and with several.
 * Run: pnpm bench, or `pnpm --filter rein-bench exec tsx memory-recall.ts` (ENTRIES=20000 for a quicker run).
 */

import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { MemoryEntry, MemoryType, RecallQuery } from '@rein/memory'
import { SqliteMemoryStore } from '@rein/memory-sqlite'
import { measure } from './measure.ts'

const ENTRIES = Number(process.env.ENTRIES ?? 100_000)
const scratch = mkdtempSync(join(tmpdir(), 'rein-bench-memory-'))
process.on('exit', () => rmSync(scratch, { recursive: true, force: true }))

const TYPES: MemoryType[] = ['fact', 'preference', 'decision', 'episode', 'procedure']
const WORDS = Array.from({ length: 5000 }, (_, index) => `w${index.toString(36)}`)
const COMMON = ['the', 'user', 'project', 'uses', 'prefers', 'tests', 'build', 'with', 'and', 'not']
const CHINESE = ['用户', '喜欢', '项目', '使用', '测试', '构建', '部署', '数据库', '配置', '文档']

/** A deterministic generator, so every run fills the same database. */
let seed = 42
const next = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
  return seed / 2_147_483_648
}
const pick = <T>(items: readonly T[]) => items[Math.floor(next() * next() * items.length)]!

function content(index: number): string {
  if (index % 10 === 0) return Array.from({ length: 6 }, () => pick(CHINESE)).join('') + ` ${pick(WORDS)}`
  return Array.from({ length: 12 }, () => (next() < 0.4 ? pick(COMMON) : pick(WORDS))).join(' ')
}

function entry(index: number): MemoryEntry {
  const project = index % 2 === 1
  return {
    id: `m${String(index).padStart(6, '0')}`,
    scope: project ? 'project' : 'user',
    ...(project ? { projectId: `/work/project-${index % 10}` } : {}),
    type: TYPES[index % TYPES.length]!,
    content: content(index),
    source: { sessionId: `s${Math.floor(index / 50)}` },
    createdAt: 1_700_000_000_000 + index * 1000,
    updatedAt: 1_700_000_000_000 + index * 1000,
    ...(index % 7 === 0 ? { expiresAt: 1_700_000_000_000 + index * 2000 } : {}),
  }
}

const store = await SqliteMemoryStore.open({ file: join(scratch, 'memory.db') })
const fillStart = process.hrtime.bigint()
for (let index = 0; index < ENTRIES; index++) await store.insert(entry(index))
const fillSeconds = Number(process.hrtime.bigint() - fillStart) / 1e9
const megabytes = (statSync(store.file).size + statSync(`${store.file}-wal`).size) / 1024 / 1024

const base: RecallQuery & { now: number } = { scopes: ['user', 'project'], projectId: '/work/project-3', limit: 20, now: 1_700_000_000_000 + ENTRIES * 1000 }
const cases: [string, RecallQuery & { now: number }][] = [
  ['no query (type, recency, id)', base],
  ['no query, one type (procedure, sorted last)', { ...base, types: ['procedure'] }],
  ['one common word ("prefers")', { ...base, query: 'prefers' }],
  ['one rare word (in ~0.2% of entries)', { ...base, query: WORDS[1000]! }],
  ['a sentence of 8 words', { ...base, query: 'what build tool does the user prefer for tests' }],
  ['Chinese ("用户喜欢什么")', { ...base, query: '用户喜欢什么' }],
  ['no match', { ...base, query: 'kubernetes' }],
]

console.log(`\nmemory-sqlite: ${ENTRIES} entries, ${megabytes.toFixed(1)} MiB; fill ${fillSeconds.toFixed(1)} s (${(fillSeconds * 1e6 / ENTRIES).toFixed(0)} µs per insert, one transaction each)`)
console.log('recall, limit 20, user + one project:')
for (const [name, query] of cases) {
  const found = (await store.recall(query)).length
  const result = await measure(name, () => store.recall(query), { iterations: 10, rounds: 5, warmup: 3 })
  console.log(`  ${name.padEnd(44)} ${(result.nsPerOp / 1e6).toFixed(2).padStart(8)} ms  (${found} found)`)
}
await store.close()
