import { mkdirSync, symlinkSync } from 'node:fs'
import { Context } from '@deepseek-ai/cordis'
import { ReinError } from '@rein/base'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { InMemoryMemoryStore, MemoryConfig, MemoryService, type MemoryDraft } from '../src/index.ts'
import { draft, setup, storePlugin, useTempHome } from './harness.ts'

const temp = useTempHome()

/** Sets the clock (Date only: cordis's timers keep running). */
function clockAt(time: number): void {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(time)
}

afterEach(() => {
  vi.useRealTimers()
})

/** An in-memory store with `atomically`: records how each body ended and the most bodies open at once. */
class AtomicStore extends InMemoryMemoryStore {
  readonly bodies: ('done' | 'threw')[] = []
  mostAtOnce = 0
  private open = 0

  async atomically<T>(body: () => Promise<T>): Promise<T> {
    this.mostAtOnce = Math.max(this.mostAtOnce, ++this.open)
    try {
      // A turn of the event loop inside, so a second body started meanwhile would overlap.
      await new Promise((resolve) => setImmediate(resolve))
      const result = await body()
      this.bodies.push('done')
      return result
    } catch (error) {
      this.bodies.push('threw')
      throw error
    } finally {
      this.open--
    }
  }
}

describe('write: validation', () => {
  const refused: [string, Record<string, unknown>, string][] = [
    ['an unknown scope', { scope: 'session' }, 'scope must be one of user, project'],
    ['an unknown type', { type: 'opinion' }, 'type must be one of'],
    ['a project entry without a projectId', { scope: 'project' }, 'a project entry needs a projectId'],
    ['a user entry with a projectId', { projectId: '/w' }, 'a user entry has no projectId'],
    ['empty content', { content: '' }, 'content must be a non-empty string'],
    ['blank content', { content: ' \n\t ' }, 'content must be a non-empty string'],
    ['content that is not text', { content: 42 }, 'content must be a non-empty string'],
    ['content over maxContentChars', { content: 'x'.repeat(41) }, 'content is 41 characters; the most is 40'],
    ['a confidence above 1', { confidence: 1.5 }, 'confidence must be a number from 0 to 1'],
    ['a negative confidence', { confidence: -0.1 }, 'confidence must be a number from 0 to 1'],
    ['an expiry in the past', { expiresAt: 1 }, 'expiresAt is not in the future'],
    ['a source without a session', { source: {} }, 'source.sessionId must be a non-empty string'],
    // Each would have passed and then failed in the store as MEMORY_STORE_FAILED (an INTEGER column).
    ['a fractional expiresAt', { expiresAt: Date.now() + 60_000.5 }, 'expiresAt must be a whole number of epoch milliseconds'],
    ['an expiresAt beyond safe integers', { expiresAt: 2 ** 60 }, 'expiresAt must be a whole number of epoch milliseconds'],
    ['an expiresAt of 1e300', { expiresAt: 1e300 }, 'expiresAt must be a whole number of epoch milliseconds'],
    ['a NaN confidence', { confidence: Number.NaN }, 'confidence must be a number from 0 to 1'],
    ['a confidence that is text', { confidence: '0.5' }, 'confidence must be a number from 0 to 1'],
    // Each would be kept changed by a UTF-8 store: the entry would leave its project.
    ['a projectId holding half a character', { scope: 'project', projectId: '/w\uD800' }, 'projectId holds half a character'],
    ['a session id holding half a character', { source: { sessionId: 's\uDC00' } }, 'source.sessionId holds half a character'],
  ]
  for (const [what, changes, message] of refused) {
    it(`refuses ${what} with INVALID_ARGS`, async () => {
      const { ctx, store } = await setup({ maxContentChars: 40 })
      await expect(ctx.memory.write(draft(changes) as MemoryDraft)).rejects.toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining(message) })
      expect(await store.all()).toEqual([])
    })
  }

  const secrets: [string, string, string][] = [
    ['an OpenAI or DeepSeek key', `The key is sk-${'a1B2'.repeat(8)}.`, 'an sk- API key'],
    ['an OpenAI project key', `sk-proj-${'Ab3_'.repeat(10)}`, 'an sk- API key'],
    ['an AWS access key id', 'AWS: AKIAIOSFODNN7EXAMPLE', 'an AWS access key'],
    ['a GitHub token', `token ghp_${'x1Y2'.repeat(9)}`, 'a GitHub token'],
    ['a GitHub fine-grained token', `github_pat_11ABCDEFG0${'q'.repeat(40)}`, 'a GitHub token'],
    ['a Slack token', 'xoxb-1234567890-abcdefghij', 'a Slack token'],
    ['a private key', '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----', 'a private key'],
    ['a JWT', `Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${'s'.repeat(20)}`, 'a JSON Web Token'],
    ['a Google API key', `AIza${'SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q'}`, 'a Google API key'],
  ]
  for (const [what, content, kind] of secrets) {
    it(`refuses content holding ${what}, naming only its kind, never echoing it`, async () => {
      const { ctx, store } = await setup()
      const failure = await ctx.memory.write(draft({ content })).then(() => undefined, (error: unknown) => error as { code: string; message: string; details: unknown })
      expect(failure).toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining(`content looks like a secret (${kind}): memory is sent to the model in every session; never save keys`) })
      const secret = content.replace(/^.*?(sk-|AKIA|gh[pousr]_|github_pat_|xox|-----BEGIN|eyJ|AIza)/s, '$1').slice(0, 24)
      expect(JSON.stringify([failure!.message, failure!.details])).not.toContain(secret)
      expect(await store.all()).toEqual([])
    })
  }

  it('refuses content holding the value of an environment variable named like a secret, naming the variable only', async () => {
    const { ctx, store } = await setup()
    const value = 'short-key-8271'
    process.env.REIN_TEST_SERVICE_API_KEY = value
    try {
      const failure = await ctx.memory.write(draft({ content: `The key for the service is ${value}.` })).then(() => undefined, (error: unknown) => error as { code: string; message: string; details: unknown })
      expect(failure).toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('REIN_TEST_SERVICE_API_KEY') })
      expect(JSON.stringify([failure!.message, failure!.details])).not.toContain(value)
      expect(await store.all()).toEqual([])
    } finally {
      delete process.env.REIN_TEST_SERVICE_API_KEY
    }
  })

  it('refuses content holding only the body of such a key, without its kind prefix (sk-proj-), naming the variable only', async () => {
    const { ctx, store } = await setup()
    const body = 'Zq81kLmN0pQrStUv27Wx'
    process.env.REIN_TEST_SERVICE_API_KEY = `sk-proj-${body}`
    try {
      const failure = await ctx.memory.write(draft({ content: `The key ends ${body}.` })).then(() => undefined, (error: unknown) => error as { code: string; message: string; details: unknown })
      expect(failure).toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('REIN_TEST_SERVICE_API_KEY') })
      expect(JSON.stringify([failure!.message, failure!.details])).not.toContain(body)
      expect(await store.all()).toEqual([])
    } finally {
      delete process.env.REIN_TEST_SERVICE_API_KEY
    }
  })

  it('a key saved before it was known as one (its variable unset then, or put in the store another way) is read masked, by every reader', async () => {
    const { ctx, store } = await setup()
    const value = 'short-key-8271'
    const sk = `sk-proj-${'Ab3_'.repeat(10)}`
    const { entry } = await ctx.memory.write(draft({ content: `The key for the service is ${value}.` }))
    await store.insert({ ...entry, id: 'mem_planted', content: `Use ${sk} for the proxy.` })
    process.env.REIN_TEST_SERVICE_API_KEY = value
    try {
      const masked = 'The key for the service is [$REIN_TEST_SERVICE_API_KEY].'
      expect(await ctx.memory.get(entry.id)).toMatchObject({ content: masked })
      expect((await ctx.memory.list()).map((found) => found.content).sort()).toEqual([masked, 'Use [an sk- API key] for the proxy.'].sort())
      expect((await ctx.memory.recall({ scopes: ['user'], query: 'key service proxy', limit: 5 })).map((found) => found.content)).not.toContain(expect.stringContaining(value))
      expect(await ctx.memory.update(entry.id, { confidence: 0.5 })).toMatchObject({ content: masked })
      expect(await ctx.memory.forget('mem_planted')).toMatchObject({ content: 'Use [an sk- API key] for the proxy.' })
    } finally {
      delete process.env.REIN_TEST_SERVICE_API_KEY
    }
  })

  it('does not take a secret variable holding a word, a path or a URL for a key in ordinary text', async () => {
    const { ctx } = await setup()
    const values = { REIN_TEST_POSTGRES_PASSWORD: 'postgres', REIN_TEST_DB_PASSWORD: 'changeme', REIN_TEST_GOOGLE_APPLICATION_CREDENTIALS: '/home/dev/creds-2024.json', REIN_TEST_KEY_FILE: 'keys2024/main.pem', REIN_TEST_API_TOKEN: 'https://tokens.example/v2' }
    Object.assign(process.env, values)
    try {
      for (const content of ['The project uses postgres 16.', 'The default password changeme must go.', 'Credentials live in /home/dev/creds-2024.json.', 'The key is keys2024/main.pem, not in the repo.', 'Tokens come from https://tokens.example/v2.']) {
        expect((await ctx.memory.write(draft({ content }))).outcome).toBe('added')
      }
    } finally {
      for (const name of Object.keys(values)) delete process.env[name]
    }
  })

  it('does not take ordinary text about keys for a secret', async () => {
    const { ctx } = await setup()
    for (const content of ['Keys live in 1Password, never in the repo.', 'Use the task-runner, not make.', 'The sk- prefix marks DeepSeek keys.', 'Run ghp_ checks in CI.']) {
      expect((await ctx.memory.write(draft({ content }))).outcome).toBe('added')
    }
  })

  it('refuses a secret in an update too', async () => {
    const { ctx } = await setup()
    const { entry } = await ctx.memory.write(draft())
    await expect(ctx.memory.update(entry.id, { content: 'AKIAIOSFODNN7EXAMPLE' })).rejects.toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('looks like a secret (an AWS access key)') })
  })

  it('counts characters, not UTF-16 units: 40 emoji fit a 40-character cap', async () => {
    const { ctx } = await setup({ maxContentChars: 40 })
    expect((await ctx.memory.write(draft({ content: '🙂'.repeat(40) }))).outcome).toBe('added')
  })

  it('names every problem at once', async () => {
    const { ctx } = await setup()
    await expect(ctx.memory.write(draft({ scope: 'x', type: 'y', content: '' }) as MemoryDraft)).rejects.toMatchObject({
      code: 'INVALID_ARGS',
      details: { problems: [expect.stringContaining('scope'), expect.stringContaining('type'), expect.stringContaining('content')] },
    })
  })

  it('keeps an entry as given, with an mem_ id, times and the content trimmed', async () => {
    const { ctx } = await setup()
    const before = Date.now()
    const { entry, outcome } = await ctx.memory.write(draft({ scope: 'project', projectId: '/w', type: 'decision', content: '  Use vitest.\n', confidence: 0.8, source: { sessionId: 's1', messageId: 'm1', extra: 1 } }))
    expect(outcome).toBe('added')
    expect(entry).toEqual({
      id: expect.stringMatching(/^mem_[A-Za-z0-9_-]{12}$/), scope: 'project', projectId: '/w', type: 'decision', content: 'Use vitest.',
      source: { sessionId: 's1', messageId: 'm1' }, confidence: 0.8, createdAt: entry.createdAt, updatedAt: entry.createdAt,
    })
    expect(entry.createdAt).toBeGreaterThanOrEqual(before)
    expect(Object.isFrozen(entry)).toBe(true)
  })
})

describe('write: duplicates', () => {
  it('refreshes a live entry with the same normalized content instead of adding one', async () => {
    const { ctx, store } = await setup()
    clockAt(1_000_000)
    const first = await ctx.memory.write(draft({ content: 'Prefers pnpm over npm.' }))
    clockAt(2_000_000)
    const second = await ctx.memory.write(draft({ content: '  PREFERS   pnpm over npm ', source: { sessionId: 's2' } }))
    expect(second.outcome).toBe('refreshed')
    expect(second.entry).toMatchObject({ id: first.entry.id, content: 'Prefers pnpm over npm.', source: { sessionId: 's2' }, createdAt: first.entry.createdAt })
    expect(second.entry.updatedAt).toBe(2_000_000)
    expect(await store.all()).toHaveLength(1)
  })

  it('adds when scope, project or type differ', async () => {
    const { ctx, store } = await setup()
    await ctx.memory.write(draft())
    await ctx.memory.write(draft({ type: 'fact' }))
    await ctx.memory.write(draft({ scope: 'project', projectId: '/a' }))
    await ctx.memory.write(draft({ scope: 'project', projectId: '/b' }))
    expect((await ctx.memory.write(draft({ scope: 'project', projectId: '/b' }))).outcome).toBe('refreshed')
    expect(await store.all()).toHaveLength(4)
  })

  it('adds again once the matching entry was retired or expired', async () => {
    const { ctx, store } = await setup()
    const old = await ctx.memory.write(draft({ content: 'Uses jest.' }))
    await ctx.memory.write(draft({ content: 'Uses vitest.', supersedes: old.entry.id }))
    expect((await ctx.memory.write(draft({ content: 'Uses jest.' }))).outcome).toBe('added')
    clockAt(1_000_000)
    const soon = await ctx.memory.write(draft({ content: 'On call this week.', expiresAt: 1_000_020 }))
    clockAt(1_000_020)
    const again = await ctx.memory.write(draft({ content: 'On call this week.' }))
    expect(again.outcome).toBe('added')
    expect(again.entry.id).not.toBe(soon.entry.id)
    expect(await store.all()).toHaveLength(5)
  })
})

describe('write: supersedes', () => {
  it('retires the superseded entry (kept, dated, naming its successor) and never recalls it', async () => {
    const { ctx, store } = await setup()
    const old = await ctx.memory.write(draft({ content: 'Tests run with jest.', type: 'fact' }))
    const { entry } = await ctx.memory.write(draft({ content: 'Tests run with vitest.', type: 'fact', supersedes: old.entry.id }))
    expect(entry.supersedes).toBe(old.entry.id)
    const kept = await store.get(old.entry.id)
    expect(kept).toMatchObject({ retiredBy: entry.id, retiredAt: entry.createdAt, content: 'Tests run with jest.' })
    const recalled = await ctx.memory.recall({ scopes: ['user'], query: 'tests run with', limit: 10 })
    expect(recalled.map((item) => item.id)).toEqual([entry.id])
    expect((await ctx.memory.recall({ scopes: ['user'], limit: 10 })).map((item) => item.id)).toEqual([entry.id])
  })

  it('a project correction cannot retire a user entry: INVALID_ARGS, and the user entry stays live', async () => {
    const { ctx, store } = await setup()
    const user = await ctx.memory.write(draft({ content: 'Prefers short answers.' }))
    await expect(ctx.memory.write(draft({ scope: 'project', projectId: '/w', content: 'Prefers long answers.', supersedes: user.entry.id }))).rejects.toMatchObject({
      code: 'INVALID_ARGS', message: `a correction keeps its scope: ${user.entry.id} is a user entry; write the correction with scope user`,
    })
    expect(await store.all()).toEqual([user.entry])
  })

  it('a correction cannot retire another scope\'s or another project\'s entry either', async () => {
    const { ctx, store } = await setup()
    const here = await ctx.memory.write(draft({ scope: 'project', projectId: '/a', content: 'Uses jest.' }))
    await expect(ctx.memory.write(draft({ content: 'Uses vitest.', supersedes: here.entry.id }))).rejects.toMatchObject({
      code: 'INVALID_ARGS', message: `a correction keeps its scope: ${here.entry.id} is a project entry; write the correction with scope project`,
    })
    await expect(ctx.memory.write(draft({ scope: 'project', projectId: '/b', content: 'Uses vitest.', supersedes: here.entry.id }))).rejects.toMatchObject({
      code: 'INVALID_ARGS', message: expect.stringContaining(`${here.entry.id} is an entry of another project`),
    })
    expect(await store.all()).toEqual([here.entry])
  })

  it('refuses an unknown id with MEMORY_NOT_FOUND and writes nothing', async () => {
    const { ctx, store } = await setup()
    await expect(ctx.memory.write(draft({ supersedes: 'mem_nope' }))).rejects.toMatchObject({ code: 'MEMORY_NOT_FOUND' })
    expect(await store.all()).toEqual([])
  })

  it('refuses an id or a workspace root that is not a string with INVALID_ARGS, before the store sees it', async () => {
    const { ctx } = await setup()
    for (const bad of [{ a: 1 }, Symbol('x'), 42, undefined, '']) {
      const id = bad as unknown as string
      await expect(ctx.memory.get(id)).rejects.toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('id must be') })
      await expect(ctx.memory.forget(id)).rejects.toMatchObject({ code: 'INVALID_ARGS' })
      await expect(ctx.memory.update(id, { content: 'x' })).rejects.toMatchObject({ code: 'INVALID_ARGS' })
      await expect(ctx.memory.projectIdFor(id)).rejects.toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('workspace root must be') })
    }
  })

  it('refuses to supersede an entry another already superseded, but lets the same correction be written again', async () => {
    const { ctx } = await setup()
    const old = await ctx.memory.write(draft({ content: 'A.' }))
    const fix = await ctx.memory.write(draft({ content: 'B.', supersedes: old.entry.id }))
    const replay = await ctx.memory.write(draft({ content: 'B.', supersedes: old.entry.id }))
    expect(replay).toMatchObject({ outcome: 'refreshed', entry: { id: fix.entry.id } })
    await expect(ctx.memory.write(draft({ content: 'C.', supersedes: old.entry.id }))).rejects.toMatchObject({ code: 'MEMORY_RETIRED', message: expect.stringContaining(fix.entry.id) })
  })

  it('a correction equal to another live entry refreshes that one and still retires the old', async () => {
    const { ctx, store } = await setup()
    const kept = await ctx.memory.write(draft({ content: 'B.' }))
    const old = await ctx.memory.write(draft({ content: 'A.' }))
    const result = await ctx.memory.write(draft({ content: 'B.', supersedes: old.entry.id }))
    expect(result).toMatchObject({ outcome: 'refreshed', entry: { id: kept.entry.id } })
    expect(await store.get(old.entry.id)).toMatchObject({ retiredBy: kept.entry.id })
  })
})

describe('update and forget', () => {
  it('update changes content and type and moves updatedAt; null removes the expiry', async () => {
    const { ctx } = await setup()
    const { entry } = await ctx.memory.write(draft({ expiresAt: Date.now() + 60_000 }))
    const next = await ctx.memory.update(entry.id, { content: ' Prefers yarn. ', type: 'fact', expiresAt: null })
    expect(next).toMatchObject({ id: entry.id, content: 'Prefers yarn.', type: 'fact', createdAt: entry.createdAt })
    expect(next.expiresAt).toBeUndefined()
    expect(next.updatedAt).toBeGreaterThanOrEqual(entry.updatedAt)
  })

  it('update refuses an empty patch, bad content, an unknown id and a retired entry', async () => {
    const { ctx } = await setup()
    const old = await ctx.memory.write(draft({ content: 'A.' }))
    await ctx.memory.write(draft({ content: 'B.', supersedes: old.entry.id }))
    await expect(ctx.memory.update(old.entry.id, {})).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    await expect(ctx.memory.update(old.entry.id, { content: '' })).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    await expect(ctx.memory.update('mem_nope', { content: 'x' })).rejects.toMatchObject({ code: 'MEMORY_NOT_FOUND' })
    await expect(ctx.memory.update(old.entry.id, { content: 'x' })).rejects.toMatchObject({ code: 'MEMORY_RETIRED' })
  })

  it('update refuses a fractional or huge expiresAt and a NaN confidence with INVALID_ARGS', async () => {
    const { ctx } = await setup()
    const { entry } = await ctx.memory.write(draft())
    for (const patch of [{ expiresAt: Date.now() + 60_000.5 }, { expiresAt: 1e300 }, { confidence: Number.NaN }]) {
      await expect(ctx.memory.update(entry.id, patch)).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    }
  })

  it('forget deletes the entry and returns it; a second forget is MEMORY_NOT_FOUND', async () => {
    const { ctx, store } = await setup()
    const { entry } = await ctx.memory.write(draft())
    expect(await ctx.memory.forget(entry.id)).toEqual(entry)
    expect(await store.all()).toEqual([])
    await expect(ctx.memory.forget(entry.id)).rejects.toMatchObject({ code: 'MEMORY_NOT_FOUND' })
  })
})

describe('calls at the same time', () => {
  it('two writes of the same memory at once keep one entry', async () => {
    const { ctx, store } = await setup()
    const results = await Promise.all([ctx.memory.write(draft()), ctx.memory.write(draft({ content: 'prefers PNPM over npm' }))])
    expect(results.map((result) => result.outcome)).toEqual(['added', 'refreshed'])
    expect(await store.all()).toHaveLength(1)
  })

  it('two corrections of one entry at once retire it once; the second is MEMORY_RETIRED', async () => {
    const { ctx, store } = await setup()
    const old = await ctx.memory.write(draft({ content: 'A.' }))
    const [first, second] = await Promise.allSettled([
      ctx.memory.write(draft({ content: 'B.', supersedes: old.entry.id })),
      ctx.memory.write(draft({ content: 'C.', supersedes: old.entry.id })),
    ])
    expect(first).toMatchObject({ status: 'fulfilled', value: { outcome: 'added' } })
    expect(second).toMatchObject({ status: 'rejected', reason: { code: 'MEMORY_RETIRED' } })
    expect((await store.all()).filter((entry) => entry.supersedes === old.entry.id)).toHaveLength(1)
  })

  it('a forget racing an update returns the entry as it was deleted, updated, not as it was before', async () => {
    const { ctx, store } = await setup()
    const { entry } = await ctx.memory.write(draft())
    const [updated, forgot] = await Promise.all([ctx.memory.update(entry.id, { content: 'Prefers yarn.' }), ctx.memory.forget(entry.id)])
    expect(forgot).toEqual(updated)
    expect(forgot.content).toBe('Prefers yarn.')
    expect(await store.all()).toEqual([])
  })

  it('runs each write, update and forget in the store\'s atomically, one at a time, and goes on after one fails', async () => {
    const ctx = new Context()
    await ctx.plugin(MemoryService, {})
    const store = new AtomicStore()
    await ctx.plugin(storePlugin(store))
    const { entry } = await ctx.memory.write(draft())
    const calls = await Promise.allSettled([
      ctx.memory.update(entry.id, { content: 'Prefers yarn.' }),
      ctx.memory.write(draft({ supersedes: 'mem_nope' })),
      ctx.memory.forget(entry.id),
    ])
    expect(calls.map((call) => call.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(store.bodies).toEqual(['done', 'done', 'threw', 'done'])
    expect(store.mostAtOnce).toBe(1)
    expect(await store.all()).toEqual([])
  })
})

describe('recall', () => {
  it('returns only live entries of the asked scopes and project', async () => {
    const { ctx } = await setup()
    const user = await ctx.memory.write(draft({ content: 'Likes short answers.' }))
    const here = await ctx.memory.write(draft({ scope: 'project', projectId: '/a', type: 'decision', content: 'Answers cite files.' }))
    await ctx.memory.write(draft({ scope: 'project', projectId: '/b', type: 'decision', content: 'Answers in French.' }))
    await ctx.memory.write(draft({ content: 'Answers expire.', expiresAt: Date.now() + 60_000 }))
    const later = Date.now() + 120_000
    const ids = async (query: Parameters<typeof ctx.memory.recall>[0]) => (await ctx.memory.recall(query)).map((entry) => entry.id).sort()
    expect(await ids({ scopes: ['user', 'project'], projectId: '/a', query: 'answers', limit: 10, now: later })).toEqual([user.entry.id, here.entry.id].sort())
    expect(await ids({ scopes: ['project'], projectId: '/a', limit: 10 })).toEqual([here.entry.id])
    expect(await ids({ scopes: ['user'], types: ['decision'], limit: 10 })).toEqual([])
  })

  it('never returns a retired or expired entry, even when the store does', async () => {
    const { ctx, store } = await setup()
    const { entry } = await ctx.memory.write(draft())
    store.recall = async () => [{ ...entry, retiredAt: 1, retiredBy: 'mem_x' }, { ...entry, id: 'mem_old', expiresAt: 1 }, entry]
    expect(await ctx.memory.recall({ scopes: ['user'], limit: 10 })).toEqual([entry])
  })

  it('caps limit at maxRecall and ranks by shared words', async () => {
    const { ctx, store } = await setup({ maxRecall: 2 })
    for (const content of ['alpha', 'alpha beta', 'alpha beta gamma', 'delta']) await ctx.memory.write(draft({ content }))
    const found = await ctx.memory.recall({ scopes: ['user'], query: 'beta gamma alpha', limit: 100 })
    expect(found.map((entry) => entry.content)).toEqual(['alpha beta gamma', 'alpha beta'])
    expect(await store.recall({ scopes: ['user'], query: 'zeta', limit: 5, now: Date.now() })).toEqual([])
  })

  it('without a query, orders by type as MemoryType lists them, then newest first, then id', async () => {
    const { ctx } = await setup()
    clockAt(1_000)
    const procedure = await ctx.memory.write(draft({ type: 'procedure', content: 'p' }))
    const oldFact = await ctx.memory.write(draft({ type: 'fact', content: 'f1' }))
    clockAt(2_000)
    const preference = await ctx.memory.write(draft({ type: 'preference', content: 'q' }))
    const newFact = await ctx.memory.write(draft({ type: 'fact', content: 'f2' }))
    expect((await ctx.memory.recall({ scopes: ['user'], limit: 10 })).map((entry) => entry.id))
      .toEqual([newFact.entry.id, oldFact.entry.id, preference.entry.id, procedure.entry.id])
  })

  it('refuses a now that is not a whole number of milliseconds', async () => {
    const { ctx } = await setup()
    for (const now of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, '5' as unknown as number]) {
      await expect(ctx.memory.recall({ scopes: ['user'], limit: 5, now })).rejects.toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('now must be') })
    }
  })

  it('refuses a project recall without a projectId, and unknown scopes', async () => {
    const { ctx } = await setup()
    await expect(ctx.memory.recall({ scopes: ['project'], limit: 5 })).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    await expect(ctx.memory.recall({ scopes: ['session' as 'user'], limit: 5 })).rejects.toMatchObject({ code: 'INVALID_ARGS' })
  })
})

describe('without a store', () => {
  it('a malformed recall is INVALID_ARGS even without a store', async () => {
    const { ctx } = await setup({}, false)
    await expect(ctx.memory.recall(null as never)).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    await expect(ctx.memory.recall({ scopes: ['session' as 'user'], limit: 5 })).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    await expect(ctx.memory.recall({ scopes: ['user'], limit: 5, now: 0.5 })).rejects.toMatchObject({ code: 'INVALID_ARGS' })
  })

  it('recall and list find nothing, writes are NO_MEMORY_STORE', async () => {
    const { ctx } = await setup({}, false)
    expect(ctx.memory.hasStore()).toBe(false)
    expect(await ctx.memory.recall({ scopes: ['user'], limit: 5 })).toEqual([])
    expect(await ctx.memory.list()).toEqual([])
    expect(await ctx.memory.get('mem_x')).toBeUndefined()
    await expect(ctx.memory.write(draft())).rejects.toMatchObject({ code: 'NO_MEMORY_STORE' })
    await expect(ctx.memory.update('mem_x', { content: 'x' })).rejects.toMatchObject({ code: 'NO_MEMORY_STORE' })
    await expect(ctx.memory.forget('mem_x')).rejects.toMatchObject({ code: 'NO_MEMORY_STORE' })
  })
})

describe('registerStore', () => {
  it('refuses a second store while one is registered', async () => {
    const { ctx } = await setup()
    expect(() => ctx.memory.registerStore(new InMemoryMemoryStore())).toThrow(expect.objectContaining({ code: 'DUPLICATE_MEMORY_STORE' }))
  })

  it('closes the store when its plugin is disposed, and takes another after', async () => {
    const { ctx, store, storeFiber } = await setup()
    await storeFiber!.dispose()
    expect(store.closed).toBe(true)
    expect(ctx.memory.hasStore()).toBe(false)
    const next = new InMemoryMemoryStore()
    await ctx.plugin(storePlugin(next))
    expect(ctx.memory.hasStore()).toBe(true)
    await ctx.memory.write(draft())
    expect(await next.all()).toHaveLength(1)
  })

  it('tells listeners once (memory/unavailable) when a store that cannot be used is registered, and keeps it for list', async () => {
    const { ctx } = await setup({}, false)
    const told: unknown[] = []
    ctx.on('memory/unavailable', (error) => { told.push(error) })
    const failure = new ReinError('MEMORY_STORE_LOCKED', 'memory database /x/memory.db is locked by another process')
    const broken = () => Object.assign(new InMemoryMemoryStore(), { unavailable: failure, all: () => Promise.reject(failure) })
    const fiber = await ctx.plugin(storePlugin(broken()))
    expect(told).toEqual([failure])
    expect(ctx.memory.hasStore()).toBe(true)
    await expect(ctx.memory.list()).rejects.toBe(failure)
    await fiber.dispose()
    await ctx.plugin(storePlugin(broken()))
    expect(told).toEqual([failure])
  })

  it('a store registered again that cannot be used for another reason is told as a warning, once: the event went out already', async () => {
    const { ctx } = await setup({}, false)
    const told: unknown[] = []
    ctx.on('memory/unavailable', (error) => { told.push(error) })
    const warned: string[] = []
    ctx.logger.exporter({ levels: { default: 3 }, export: (message) => { if (message.type === 'warn') warned.push(message.args.map(String).join(' ')) } })
    const locked = new ReinError('MEMORY_STORE_LOCKED', 'memory database /x/memory.db is locked by another process')
    const corrupt = new ReinError('MEMORY_STORE_CORRUPT', 'memory database /x/memory.db is damaged or not a SQLite database (file is not a database); move it aside and rein starts an empty one')
    const broken = (failure: ReinError) => Object.assign(new InMemoryMemoryStore(), { unavailable: failure })
    await (await ctx.plugin(storePlugin(broken(locked)))).dispose()
    await (await ctx.plugin(storePlugin(broken(corrupt)))).dispose()
    await ctx.plugin(storePlugin(broken(corrupt)))
    expect(told).toEqual([locked])
    expect(warned).toEqual([expect.stringContaining('move it aside')])
  })

  it('says nothing to memory/unavailable listeners for a store that works', async () => {
    const { ctx } = await setup({}, false)
    const told: unknown[] = []
    ctx.on('memory/unavailable', (error) => { told.push(error) })
    await ctx.plugin(storePlugin(new InMemoryMemoryStore()))
    expect(told).toEqual([])
  })

  it('list gives every entry, retired included, oldest first', async () => {
    const { ctx } = await setup()
    clockAt(1_000_000)
    const old = await ctx.memory.write(draft({ content: 'A.' }))
    clockAt(1_000_001)
    const fix = await ctx.memory.write(draft({ content: 'B.', supersedes: old.entry.id }))
    expect((await ctx.memory.list()).map((entry) => [entry.id, entry.retiredBy])).toEqual([[old.entry.id, fix.entry.id], [fix.entry.id, undefined]])
  })
})

describe('projectIdFor', () => {
  it('is the workspace root\'s real path, or Config projectId', async () => {
    const real = temp.folder('real-root')
    mkdirSync(real, { recursive: true })
    const link = temp.folder('link-root')
    symlinkSync(real, link)
    const { ctx } = await setup()
    expect(await ctx.memory.projectIdFor(link)).toBe(real)
    expect(await ctx.memory.projectIdFor(temp.folder('missing/../missing'))).toBe(temp.folder('missing'))
    const named = new Context()
    await named.plugin(MemoryService, { projectId: 'rein' })
    expect(await named.memory.projectIdFor(link)).toBe('rein')
  })

  it('refuses an empty Config projectId (it would be ignored without a word) with CONFIG_INVALID', () => {
    for (const projectId of ['', '  ']) expect(() => MemoryConfig({ projectId })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.stringContaining('projectId is empty') }))
    expect(() => MemoryConfig({ projectId: 7 as never })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }))
    expect(MemoryConfig({}).projectId).toBeUndefined()
  })
})

describe('ctx.memory called with no object at all', () => {
  it('says INVALID_ARGS, not a TypeError, for a null draft, patch, query or a non-string id', async () => {
    const { ctx } = await setup()
    await expect(ctx.memory.write(null as never)).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    await expect(ctx.memory.recall(null as never)).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    await expect(ctx.memory.update('mem_x', null as never)).rejects.toMatchObject({ code: 'INVALID_ARGS' })
    await expect(ctx.memory.forget(42 as never)).rejects.toMatchObject({ code: 'INVALID_ARGS' })
  })
})
