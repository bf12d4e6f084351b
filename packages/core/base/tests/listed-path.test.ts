import { describe, expect, it } from 'vitest'
import { listedPath } from '../src/listed-path.ts'

describe('listedPath', () => {
  it('leaves a plain path as it is, and quotes one holding any control character as JSON that parses back to it', () => {
    expect(listedPath('src/a b/ü.ts')).toBe('src/a b/ü.ts')
    for (const name of ['a\nb', 'tab\tx', 'esc\u001b[31mred', 'del\u007f', 'c1\u009bx', 'nel\u0085', 'ls\u2028x', 'ps\u2029x']) {
      const shown = listedPath(name)
      expect(JSON.parse(shown)).toBe(name)
      // Nothing a terminal or a line-based reader acts on is left in it.
      // oxlint-disable-next-line no-control-regex -- control characters are what it looks for
      expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/)
    }
  })

  it('quotes a name holding a bidi control (U+202A–202E, U+2066–2069), which would show the text around it reordered', () => {
    for (const code of [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]) {
      const name = `invoice${String.fromCharCode(code)}fdp.exe`
      const shown = listedPath(name)
      expect(JSON.parse(shown)).toBe(name)
      expect(shown).toBe(`"invoice\\u${code.toString(16)}fdp.exe"`)
    }
  })
})
