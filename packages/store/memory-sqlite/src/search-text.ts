/**
 * What the full-text index sees: contents and queries in one form, so a query's words meet the
 * content's. A query never reaches `MATCH` raw: only quoted phrases joined by `OR`.
 */

/** A character of a script written without spaces between words (CJK): indexed as a word of its own. */
const UNSPACED = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]/u
const UNSPACED_ALL = new RegExp(`(${UNSPACED.source})`, 'gu')
/** A run of such characters, or a run of other characters. */
const SEGMENT = new RegExp(`${UNSPACED.source}+|[^${UNSPACED.source.slice(1, -1)}]+`, 'gu')

/** A word of a query: a letter or digit, then letters, digits and combining marks. */
const WORD = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*/gu

/** At most this many terms of a query are searched for; the rest are ignored. */
export const MAX_QUERY_TERMS = 64

/**
 * The text the index keeps for `content`: NFKC (full-width letters become plain ones), with every
 * CJK character standing apart as a word. The index's unicode61 tokenizer then splits on spaces
 * and punctuation and folds case and diacritics.
 */
export function toSearchText(content: string): string {
  return content.normalize('NFKC').replace(UNSPACED_ALL, ' $1 ')
}

/**
 * The `MATCH` expression for a person's or a model's query, `undefined` when it has no word (then
 * there is no text filter). Words are runs of letters and digits; every other character separates.
 * A CJK run becomes its overlapping pairs of characters (one character alone stays itself), each a
 * two-character phrase, so `喜欢` finds `用户喜欢pnpm` and a whole CJK sentence still finds entries
 * sharing some of its words. Each term is double-quoted (`"` doubled) and the terms are joined
 * with `OR`, so one missing word does not hide an entry; BM25 then ranks (rarer words and shorter
 * entries weigh more: a long entry holding every term can rank below a short one holding one).
 * Lower-cased here by current Unicode, while the index folds the content by unicode61's older
 * tables: capitals those lack (Adlam, Cherokee) never meet (see the README).
 */
export function toMatchQuery(query: string): string | undefined {
  const terms = new Set<string>()
  for (const word of query.normalize('NFKC').toLowerCase().match(WORD) ?? []) {
    for (const segment of word.match(SEGMENT) ?? []) {
      if (!UNSPACED.test(segment)) terms.add(segment)
      else {
        // Each match is one CJK character (code point).
        const characters = segment.match(UNSPACED_ALL) ?? []
        if (characters.length === 1) terms.add(segment)
        for (let index = 0; index + 1 < characters.length; index++) terms.add(`${characters[index]} ${characters[index + 1]}`)
      }
    }
  }
  if (terms.size === 0) return undefined
  return [...terms].slice(0, MAX_QUERY_TERMS).map((term) => `"${term.replaceAll('"', '""')}"`).join(' OR ')
}
