import { seededRandom } from '@rein/testkit'
import { describe, expect, it } from 'vitest'
import { MAX_QUERY_TERMS, toMatchQuery, toSearchText } from '../src/search-text.ts'
import { entry, openStore } from './temp-root.ts'

const NOW = 10_000

describe('toMatchQuery', () => {
  it('quotes each word and joins them with OR, operators and punctuation being separators', () => {
    expect(toMatchQuery('Use PNPM, not npm!')).toBe('"use" OR "pnpm" OR "not" OR "npm"')
    expect(toMatchQuery('a NEAR(b c) AND -d* OR "e" NOT f: ^g')).toBe('"a" OR "near" OR "b" OR "c" OR "and" OR "d" OR "or" OR "e" OR "not" OR "f" OR "g"')
    expect(toMatchQuery('x x X')).toBe('"x"')
  })

  it('is undefined for a query without a letter or digit', () => {
    for (const query of ['', '   ', '-*"\'()', '🎉🔥', '。、！']) expect(toMatchQuery(query)).toBeUndefined()
  })

  it('turns a CJK run into overlapping pairs of characters, and a lone CJK character into itself', () => {
    expect(toMatchQuery('用户喜欢')).toBe('"用 户" OR "户 喜" OR "喜 欢"')
    expect(toMatchQuery('喜')).toBe('"喜"')
    expect(toMatchQuery('使用pnpm安装')).toBe('"使 用" OR "pnpm" OR "安 装"')
  })

  it('folds full-width forms (NFKC) in queries and contents alike', () => {
    expect(toMatchQuery('ＰＮＰＭ')).toBe('"pnpm"')
    expect(toSearchText('ＰＮＰＭ使用')).toBe('PNPM 使  用 ')
  })

  it(`searches at most ${MAX_QUERY_TERMS} terms`, () => {
    const query = Array.from({ length: 100 }, (_, index) => `w${index}`).join(' ')
    expect(toMatchQuery(query)!.split(' OR ')).toHaveLength(MAX_QUERY_TERMS)
  })
})

const PIECES = [
  '-', '\'', '"', '""', '/', '.', '*', 'NEAR', 'NEAR(', 'AND', 'OR', 'NOT', '(', ')', ':', '^', '+', '{', '}', ',', '\\', '\u0000',
  'body:', '{body}', 'rowid', ' ', '  ', '\t', '\n', 'pnpm', 'vitest', 'Café', 'ＡＢＣ', '🎉', '👩‍💻', '🇵🇹', '用户', '喜欢', '東京', 'コーヒー', '서울',
  'a', '1', '٣', 'é', '\u0301', 'ß', 'İ', '\uD800', '%', '_', ';', 'DROP TABLE memory_entries;', '--', '/*', '*/',
]

describe('recall with hostile queries (fuzz)', () => {
  it('answers hundreds of random queries of FTS5 operators, quotes, emoji and CJK without one error', async () => {
    const store = await openStore()
    const next = seededRandom(12)
    const text = () => Array.from({ length: 1 + Math.floor(next() * 8) }, () => PIECES[Math.floor(next() * PIECES.length)]).join('')
    for (let index = 0; index < 50; index++) await store.insert(entry({ id: `e${index}`, content: text() || 'x', type: (['fact', 'episode'] as const)[index % 2] }))
    await store.insert(entry({ id: 'target', content: 'the build uses pnpm' }))
    const errors: string[] = []
    let found = 0
    for (let round = 0; round < 600; round++) {
      const query = text()
      try {
        const result = await store.recall({ scopes: ['user'], query, types: round % 3 === 0 ? ['fact'] : undefined, limit: 20, now: NOW })
        found += result.length
      } catch (error) {
        errors.push(`${JSON.stringify(query)}: ${(error as Error).message}`)
      }
    }
    expect(errors).toEqual([])
    expect(found).toBeGreaterThan(0)
    // Operators around a word leave the word itself searched for.
    for (const query of ['pnpm NOT', '"pnpm', 'NEAR(pnpm', 'pnpm*', '-pnpm', 'body:pnpm', '^pnpm', '(pnpm))']) {
      expect((await store.recall({ scopes: ['user'], query, limit: 60, now: NOW })).map((item) => item.id)).toContain('target')
    }
  })
})
