import { readFile } from 'node:fs/promises'
import Database from 'better-sqlite3'
import { normalizeContent, type MemoryEntry } from '@rein/memory'
import { describe, expect, it } from 'vitest'
import { entry, openStore } from './temp-root.ts'

const NOW = 10_000
const ids = (entries: readonly MemoryEntry[]) => entries.map((item) => item.id)

describe('SqliteMemoryStore: entries', () => {
  it('inserts, gets, replaces, deletes and lists entries, every field round-tripping', async () => {
    const store = await openStore()
    const full = entry({
      scope: 'project', projectId: '/work/app', type: 'decision', content: 'Use pnpm, not npm.',
      source: { sessionId: 's2', messageId: 'msg7' }, confidence: 0.75, createdAt: 2000, updatedAt: 2500,
      expiresAt: 99_000, supersedes: 'm0000', retiredAt: 3000, retiredBy: 'm9999',
    })
    const bare = entry({ createdAt: 1500 })
    await store.insert(full)
    await store.insert(bare)
    expect(await store.get(full.id)).toEqual(full)
    expect(await store.get(bare.id)).toEqual(bare)
    expect(Object.keys((await store.get(bare.id))!).sort()).toEqual(['content', 'createdAt', 'id', 'scope', 'source', 'type', 'updatedAt'])
    expect(await store.get('nobody')).toBeUndefined()
    expect(ids(await store.all())).toEqual([bare.id, full.id])

    const changed = { ...bare, content: 'changed', type: 'preference' as const, updatedAt: 4000, expiresAt: 50_000 }
    await store.replace(changed)
    expect(await store.get(bare.id)).toEqual(changed)
    await expect(store.replace(entry())).rejects.toMatchObject({ code: 'MEMORY_NOT_FOUND' })

    expect(await store.delete(full.id)).toBe(true)
    expect(await store.delete(full.id)).toBe(false)
    expect(await store.get(full.id)).toBeUndefined()
    expect(ids(await store.all())).toEqual([bare.id])
  })

  it('keeps entries across a close and a reopen of the file', async () => {
    const first = await openStore()
    const kept = entry({ content: 'kept across processes' })
    await first.insert(kept)
    await first.close()
    await expect(first.get(kept.id)).rejects.toMatchObject({ code: 'MEMORY_STORE_CLOSED' })
    const second = await openStore({ file: first.file })
    expect(await second.all()).toEqual([kept])
    expect(ids(await second.recall({ scopes: ['user'], query: 'processes', limit: 5, now: NOW }))).toEqual([kept.id])
  })

  it('refuses a second entry with the same id and leaves the first as it was', async () => {
    const store = await openStore()
    const first = entry()
    await store.insert(first)
    await expect(store.insert({ ...first, content: 'other' })).rejects.toMatchObject({ code: 'MEMORY_STORE_FAILED' })
    expect(await store.all()).toEqual([first])
  })

  it('finds a live entry of the same scope, project and type by normalized content', async () => {
    const store = await openStore()
    const user = entry({ content: 'The user prefers  TABS.' })
    const project = entry({ scope: 'project', projectId: '/p1', content: 'Tests run with vitest' })
    await store.insert(user)
    await store.insert(project)
    expect(await store.findSame('user', undefined, 'fact', normalizeContent('the user prefers tabs'), NOW)).toEqual(user)
    expect(await store.findSame('user', undefined, 'preference', normalizeContent('the user prefers tabs'), NOW)).toBeUndefined()
    expect(await store.findSame('project', '/p1', 'fact', normalizeContent('TESTS RUN WITH VITEST.'), NOW)).toEqual(project)
    expect(await store.findSame('project', '/p2', 'fact', normalizeContent('tests run with vitest'), NOW)).toBeUndefined()
    expect(await store.findSame('user', undefined, 'fact', normalizeContent('tests run with vitest'), NOW)).toBeUndefined()
    // Only live entries count: a retired or expired one is not refreshed.
    await store.replace({ ...user, retiredAt: 5000, retiredBy: 'later' })
    expect(await store.findSame('user', undefined, 'fact', normalizeContent(user.content), NOW)).toBeUndefined()
    await store.replace({ ...project, expiresAt: NOW })
    expect(await store.findSame('project', '/p1', 'fact', normalizeContent(project.content), NOW)).toBeUndefined()
    expect(await store.findSame('project', '/p1', 'fact', normalizeContent(project.content), NOW - 1)).toEqual({ ...project, expiresAt: NOW })
  })
})

describe('SqliteMemoryStore: recall', () => {
  it('orders by type, then newest first, then id, without a query', async () => {
    const store = await openStore()
    const items = [
      entry({ id: 'a-proc', type: 'procedure', updatedAt: 9000 }),
      entry({ id: 'b-fact-old', type: 'fact', updatedAt: 1000 }),
      entry({ id: 'c-pref', type: 'preference', updatedAt: 5000 }),
      entry({ id: 'd-fact-new', type: 'fact', updatedAt: 3000 }),
      entry({ id: 'e-episode', type: 'episode', updatedAt: 8000 }),
      entry({ id: 'f-decision', type: 'decision', updatedAt: 7000 }),
      entry({ id: 'a-fact-new', type: 'fact', updatedAt: 3000 }),
    ]
    for (const item of items.reverse()) await store.insert(item)
    expect(ids(await store.recall({ scopes: ['user'], limit: 10, now: NOW }))).toEqual(
      ['a-fact-new', 'd-fact-new', 'b-fact-old', 'c-pref', 'f-decision', 'e-episode', 'a-proc'])
    expect(ids(await store.recall({ scopes: ['user'], limit: 3, now: NOW }))).toEqual(['a-fact-new', 'd-fact-new', 'b-fact-old'])
    expect(ids(await store.recall({ scopes: ['user'], types: ['procedure', 'preference'], limit: 10, now: NOW }))).toEqual(['c-pref', 'a-proc'])
    expect(await store.recall({ scopes: ['user'], types: [], limit: 10, now: NOW })).toEqual([])
    expect(await store.recall({ scopes: ['user'], limit: 0, now: NOW })).toEqual([])
    expect(await store.recall({ scopes: [], limit: 10, now: NOW })).toEqual([])
    // A query without a word is no text filter.
    expect(ids(await store.recall({ scopes: ['user'], query: ' --- ', limit: 2, now: NOW }))).toEqual(['a-fact-new', 'd-fact-new'])
  })

  it('ranks by BM25 with a query, then type, recency and id', async () => {
    const store = await openStore()
    await store.insert(entry({ id: 'both', type: 'procedure', content: 'Run the tests with pnpm vitest run before pushing' }))
    await store.insert(entry({ id: 'one', type: 'fact', content: 'The project uses pnpm workspaces' }))
    await store.insert(entry({ id: 'none', type: 'fact', content: 'The user lives in Lisbon' }))
    await store.insert(entry({ id: 'tie-old', type: 'decision', content: 'deploy on fridays', updatedAt: 1000 }))
    await store.insert(entry({ id: 'tie-new', type: 'decision', content: 'deploy on mondays', updatedAt: 2000 }))
    expect(ids(await store.recall({ scopes: ['user'], query: 'pnpm vitest', limit: 10, now: NOW }))).toEqual(['both', 'one'])
    expect(ids(await store.recall({ scopes: ['user'], query: 'VITEST', limit: 10, now: NOW }))).toEqual(['both'])
    expect(ids(await store.recall({ scopes: ['user'], query: 'pnpm', limit: 1, now: NOW }))).toHaveLength(1)
    expect(ids(await store.recall({ scopes: ['user'], query: 'deploy', limit: 10, now: NOW }))).toEqual(['tie-new', 'tie-old'])
    expect(await store.recall({ scopes: ['user'], query: 'kubernetes', limit: 10, now: NOW })).toEqual([])
  })

  it('weighs length (BM25): a long entry holding both words of the query can rank below short ones holding one', async () => {
    const store = await openStore()
    await store.insert(entry({ id: 'short-vitest', content: 'vitest config lives in the root' }))
    await store.insert(entry({ id: 'short-jest', content: 'jest config lives in the root' }))
    await store.insert(entry({ id: 'long-both', content: 'We argued for a long time about the test runner; after comparing startup time, watch mode, snapshot support, ESM handling, TypeScript transforms, coverage providers and the mocking API we finally moved from jest to vitest for every package in the monorepo.' }))
    expect(ids(await store.recall({ scopes: ['user'], query: 'vitest jest', limit: 3, now: NOW })).at(-1)).toBe('long-both')
  })

  it('never finds a word an entry writes in capitals that unicode61 cannot fold (Adlam, Osage, Cherokee, Georgian Mtavruli): the query is folded by newer tables; small letters are found', async () => {
    const store = await openStore()
    const words = { adlamCapitals: '𞤀𞤁𞤂', adlamSmall: '𞤢𞤣𞤤', osageCapitals: '\u{104B0}\u{104B1}', cherokee: 'ᎠᎡ', mtavruli: 'ᲐᲑᲒ', greekCapitals: 'ΑΒΓ' }
    for (const [id, word] of Object.entries(words)) await store.insert(entry({ id, content: `note ${word}` }))
    const found: Record<string, string[]> = {}
    for (const [id, word] of Object.entries(words)) found[id] = ids(await store.recall({ scopes: ['user'], query: word, limit: 10, now: NOW }))
    expect(found).toEqual({ adlamCapitals: ['adlamSmall'], adlamSmall: ['adlamSmall'], osageCapitals: [], cherokee: [], mtavruli: [], greekCapitals: ['greekCapitals'] })
  })

  it('follows replaced content and forgets deleted entries in the full-text index', async () => {
    const store = await openStore()
    const item = entry({ content: 'the database is postgres' })
    await store.insert(item)
    await store.replace({ ...item, content: 'the database is sqlite' })
    expect(await store.recall({ scopes: ['user'], query: 'postgres', limit: 5, now: NOW })).toEqual([])
    expect(ids(await store.recall({ scopes: ['user'], query: 'sqlite', limit: 5, now: NOW }))).toEqual([item.id])
    await store.delete(item.id)
    expect(await store.recall({ scopes: ['user'], query: 'sqlite', limit: 5, now: NOW })).toEqual([])
  })

  it('leaves none of a deleted or replaced text in the database files, the full-text index included, while another connection has them open', async () => {
    const store = await openStore()
    const other = await openStore({ file: store.file })
    // Many pages of other entries, so the deleted bytes are not simply past the end of the file.
    for (let i = 0; i < 200; i++) await store.insert(entry({ content: `ordinary entry number ${i} about the build` }))
    const forgotten = entry({ content: 'the deploy password is zqxforgotten7 for the zqxforgotten server' })
    const corrected = entry({ content: 'the api token is zqxreplaced9 for the zqxreplaced proxy' })
    await store.insert(forgotten)
    await store.insert(corrected)
    expect(await store.delete(forgotten.id)).toBe(true)
    await store.replace({ ...corrected, content: 'the api token lives in the vault', updatedAt: 2000 })
    expect(await other.get(corrected.id)).toMatchObject({ content: 'the api token lives in the vault' })
    const { file } = store
    for (const path of [file, `${file}-wal`]) {
      const text = (await readFile(path).catch(() => Buffer.alloc(0))).toString('latin1')
      expect({ path, forgotten: text.includes('zqxforgotten'), replaced: text.includes('zqxreplaced') }).toEqual({ path, forgotten: false, replaced: false })
    }
  })

  it('a forget while another connection holds a read snapshot does not wait out the busy timeout for the WAL: the next write empties it of the forgotten text', async () => {
    const store = await openStore()
    for (let i = 0; i < 50; i++) await store.insert(entry({ content: `ordinary entry number ${i} about the build` }))
    const forgotten = entry({ content: 'the shed code is zqxsnapshot4 for the zqxsnapshot shed' })
    await store.insert(forgotten)
    const reader = new Database(store.file)
    try {
      // A snapshot from before the forget: the WAL cannot be emptied while it is read.
      reader.exec('BEGIN')
      reader.prepare('SELECT count(*) FROM memory_entries').get()
      expect(await store.delete(forgotten.id)).toBe(true)
      reader.exec('COMMIT')
    } finally {
      reader.close()
    }
    await store.insert(entry({ content: 'a later write' }))
    const { file } = store
    for (const path of [file, `${file}-wal`]) {
      const text = (await readFile(path).catch(() => Buffer.alloc(0))).toString('latin1')
      expect({ path, forgotten: text.includes('zqxsnapshot') }).toEqual({ path, forgotten: false })
    }
  })

  it('never recalls an expired or retired entry, with or without a query', async () => {
    const store = await openStore()
    await store.insert(entry({ id: 'live', content: 'coffee black', expiresAt: NOW + 1 }))
    await store.insert(entry({ id: 'expired-now', content: 'coffee with milk', expiresAt: NOW }))
    await store.insert(entry({ id: 'expired', content: 'coffee with sugar', expiresAt: 1 }))
    await store.insert(entry({ id: 'retired', content: 'coffee decaf', retiredAt: 5000, retiredBy: 'live' }))
    expect(ids(await store.recall({ scopes: ['user'], limit: 10, now: NOW }))).toEqual(['live'])
    expect(ids(await store.recall({ scopes: ['user'], query: 'coffee', limit: 10, now: NOW }))).toEqual(['live'])
    expect(ids(await store.recall({ scopes: ['user'], query: 'coffee', limit: 10, now: NOW - 1 })).sort()).toEqual(['expired-now', 'live'])
    expect(ids(await store.all()).sort()).toEqual(['expired', 'expired-now', 'live', 'retired'])
  })

  it('a recall naming a type many times finds its entries, not MEMORY_STORE_FAILED (too many SQL variables)', async () => {
    const store = await openStore()
    await store.insert(entry({ id: 'fact', content: 'coffee black' }))
    await store.insert(entry({ id: 'decision', type: 'decision', content: 'coffee decaf' }))
    const types = Array.from({ length: 40_000 }, () => 'fact' as const)
    expect(ids(await store.recall({ scopes: ['user'], types, limit: 10, now: NOW }))).toEqual(['fact'])
    expect(ids(await store.recall({ scopes: ['user'], types, query: 'coffee', limit: 10, now: NOW }))).toEqual(['fact'])
  })

  it('recalls project entries of the asked project only, and user entries in every project', async () => {
    const store = await openStore()
    await store.insert(entry({ id: 'user', content: 'shared note' }))
    await store.insert(entry({ id: 'p1', scope: 'project', projectId: '/p1', content: 'shared note p1' }))
    await store.insert(entry({ id: 'p2', scope: 'project', projectId: '/p2', content: 'shared note p2' }))
    for (const query of [undefined, 'shared note']) {
      const recall = (scopes: ('user' | 'project')[], projectId?: string) => store.recall({ scopes, projectId, query, limit: 10, now: NOW }).then((found) => ids(found).sort())
      expect(await recall(['user', 'project'], '/p1')).toEqual(['p1', 'user'])
      expect(await recall(['project'], '/p2')).toEqual(['p2'])
      expect(await recall(['user'], '/p2')).toEqual(['user'])
      expect(await recall(['project'])).toEqual([])
    }
  })

  it('finds CJK content with a CJK query, and mixed scripts', async () => {
    const store = await openStore()
    await store.insert(entry({ id: 'zh', content: '用户喜欢使用pnpm而不是npm' }))
    await store.insert(entry({ id: 'ja', content: '東京に住んでいる。コーヒーが好き' }))
    await store.insert(entry({ id: 'ko', content: '서울에 살고 있다' }))
    await store.insert(entry({ id: 'en', content: 'Prefers ＦＵＬＬ-width and café au lait' }))
    const recall = async (query: string) => ids(await store.recall({ scopes: ['user'], query, limit: 10, now: NOW }))
    expect(await recall('喜欢')).toEqual(['zh'])
    expect(await recall('用户喜欢什么')).toEqual(['zh'])
    expect(await recall('喜')).toEqual(['zh'])
    expect(await recall('东京')).toEqual([])
    expect(await recall('東京')).toEqual(['ja'])
    expect(await recall('コーヒー')).toEqual(['ja'])
    expect(await recall('서울에서')).toEqual(['ko'])
    expect(await recall('pnpm')).toEqual(['zh'])
    expect(await recall('使用pnpm')).toEqual(['zh'])
    expect(await recall('full width CAFE')).toEqual(['en'])
  })

  it('sees the writes of another store open on the same file', async () => {
    const first = await openStore()
    const second = await openStore({ file: first.file })
    await first.insert(entry({ id: 'from-first' }))
    expect(ids(await second.recall({ scopes: ['user'], limit: 5, now: NOW }))).toEqual(['from-first'])
  })
})

describe('SqliteMemoryStore: atomically', () => {
  it('commits a body\'s writes together and returns its value', async () => {
    const store = await openStore()
    const first = entry()
    const second = entry()
    expect(await store.atomically(async () => {
      await store.insert(first)
      await store.insert(second)
      await store.replace({ ...first, content: 'first, changed' })
      return 'value'
    })).toBe('value')
    expect(await store.all()).toEqual([{ ...first, content: 'first, changed' }, second])
    expect(ids(await store.recall({ scopes: ['user'], query: 'changed', limit: 5, now: NOW }))).toEqual([first.id])
  })

  it('undoes every write of a body that throws (search index too) and rethrows its error as it was', async () => {
    const store = await openStore()
    const kept = entry({ content: 'kept as it was' })
    await store.insert(kept)
    const added = entry({ content: 'added then undone' })
    const failure = new Error('the body failed')
    await expect(store.atomically(async () => {
      await store.insert(added)
      await store.replace({ ...kept, content: 'changed then undone' })
      await store.delete(kept.id)
      throw failure
    })).rejects.toBe(failure)
    expect(await store.all()).toEqual([kept])
    expect(await store.recall({ scopes: ['user'], query: 'undone', limit: 5, now: NOW })).toEqual([])
    expect(ids(await store.recall({ scopes: ['user'], query: 'kept', limit: 5, now: NOW }))).toEqual([kept.id])
    // The file is not left in a transaction: the next body runs and commits.
    await store.atomically(() => store.insert(added))
    expect(await store.all()).toEqual([kept, added])
  })

  it('keeps the body\'s other writes when one store call inside fails and the body goes on', async () => {
    const store = await openStore()
    const first = entry()
    await store.atomically(async () => {
      await store.insert(first)
      await expect(store.insert({ ...first, content: 'same id' })).rejects.toMatchObject({ code: 'MEMORY_STORE_FAILED' })
      await expect(store.replace(entry())).rejects.toMatchObject({ code: 'MEMORY_NOT_FOUND' })
    })
    expect(await store.all()).toEqual([first])
  })

  it('is MEMORY_STORE_CLOSED after close, without running the body', async () => {
    const store = await openStore()
    await store.close()
    let ran = false
    await expect(store.atomically(async () => { ran = true })).rejects.toMatchObject({ code: 'MEMORY_STORE_CLOSED' })
    expect(ran).toBe(false)
  })
})
