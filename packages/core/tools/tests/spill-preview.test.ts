import { describe, expect, it } from 'vitest'
import { excerpt, spillPreview } from '../src/index.ts'

const long = Array.from({ length: 100 }, (_, index) => `line ${index}`).join('\n')
const shown = excerpt(long, { chars: 200, lines: 20 })

describe('spillPreview', () => {
  it('does not assume the model has a tool that reads files', () => {
    const text = spillPreview(shown, { path: '/s/spill/c1.result.txt' })
    expect(text).toContain('[… 681 characters (85 lines) left out. The whole result (789 characters, 100 lines) is saved at /s/spill/c1.result.txt; if one of your tools reads files, read the part you need from it (a line window, or a search) rather than all of it; otherwise work from this preview.]')
    expect(text.startsWith(shown.head)).toBe(true)
    expect(text.endsWith(shown.tail)).toBe(true)
  })

  it('says only the preview exists when nothing was saved', () => {
    expect(spillPreview(shown, { error: 'disk full' }, 'output')).toContain('The whole output (789 characters, 100 lines) could not be saved (disk full); only this preview exists.]')
  })
  it('says "1 line" and "1 character", not "1 lines", for a count of one', () => {
    // One overlong line: its cut head and tail shown, its middle left out, no line wholly left out.
    const one = excerpt('x'.repeat(1_000), { chars: 200, lines: 20 })
    const text = spillPreview({ ...one, totalLines: 1 }, { path: '/s/o.txt' })
    expect(text).toContain('(inside one line) left out. The whole result (1,000 characters, 1 line)')
    const two = spillPreview({ head: 'a', headLines: 1, tail: 'b', tailLines: 1, totalChars: 4, totalLines: 3 }, { path: '/s/t.txt' })
    expect(two).toContain('[… 2 characters (1 line) left out. The whole result (4 characters, 3 lines)')
  })

  it('shows the real end of an output that is one long line, as of any other: its tail', () => {
    const text = `${'a'.repeat(30_000)} ERROR_AT_END`
    const one = excerpt(text, { chars: 200, lines: 20 })
    expect(one).toMatchObject({ head: 'a'.repeat(100), tail: `${'a'.repeat(37)} ERROR_AT_END`, totalLines: 1 })
    const preview = spillPreview(one, { path: '/s/o.txt' })
    expect(preview.endsWith(' ERROR_AT_END')).toBe(true)
    expect(preview).toContain('[… 29,863 characters (inside one line) left out.')
    expect(excerpt(`${text}\n`, { chars: 200, lines: 20 }).tail).toBe(one.tail)
  })
})
