import { randomBytes } from 'node:crypto'
import { contentHash } from '@rein/checkpoint'
import { describe, expect, it } from 'vitest'
import { DELTA_HEADER, MAGIC, MAX_DEPTH, WHOLE_HEADER, applyDelta, commonEnds, decodePayload, encodeBlob, parseHeader, type BlobHeader } from '../src/blob-format.ts'

const text = (lines: number, edit?: number) => Buffer.from(Array.from({ length: lines }, (_, index) => index === edit ? `line ${index} edited\n` : `line ${index}: ${'x'.repeat(40)}\n`).join(''))

/** What `encodeBlob` wrote, decoded the way the store reads it (the base given by the test). */
async function decode(bytes: Uint8Array, base?: Uint8Array): Promise<{ header: BlobHeader; content: Uint8Array }> {
  const header = parseHeader(bytes, bytes.length)
  if (!header) throw new Error('no header')
  if (header.kind === 'raw') return { header, content: bytes }
  const payload = await decodePayload(bytes, header)
  return { header, content: header.kind === 'whole' ? payload : applyDelta(base!, header, payload) }
}

describe('blob format', () => {
  it('finds the common prefix and suffix the way a byte-by-byte walk does, without letting them overlap', () => {
    const naive = (a: Uint8Array, b: Uint8Array) => {
      const limit = Math.min(a.length, b.length)
      let prefix = 0
      while (prefix < limit && a[prefix] === b[prefix]) prefix++
      let suffix = 0
      while (suffix < limit - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++
      return { prefix, suffix }
    }
    const big = text(400)
    const cases: Array<[Uint8Array, Uint8Array]> = [
      [big, text(400, 7)], [big, text(400, 399)], [big, text(400, 0)], [big, big], [big, text(200)], [text(200), big],
      [Buffer.from(''), big], [Buffer.from('aaaa'), Buffer.from('aa')], [Buffer.from('abcabc'), Buffer.from('abc')],
      [Buffer.concat([big, Buffer.from('tail')]), Buffer.concat([big, Buffer.from('X'), Buffer.from('tail')])],
    ]
    for (let index = 0; index < 50; index++) {
      const a = randomBytes(2000)
      const b = Buffer.concat([a.subarray(0, index * 37), randomBytes(index % 5), a.subarray(index * 37 + 3 + index)])
      cases.push([a, b])
    }
    for (const [a, b] of cases) expect(commonEnds(a, b)).toEqual(naive(a, b))
  })

  it('stores an edit as a delta of its base: hash, prefix, suffix and the middle', async () => {
    const before = text(1000)
    const after = text(1000, 500)
    const { bytes, depth } = await encodeBlob(after, { content: before, hash: contentHash(before), depth: 3 })
    expect(depth).toBe(4)
    expect(bytes.length).toBeLessThan(DELTA_HEADER + 100)
    const { header, content } = await decode(bytes, before)
    expect(header).toMatchObject({ kind: 'delta', depth: 4, base: contentHash(before), length: after.length })
    expect(Buffer.from(content).equals(after)).toBe(true)
  })

  it('stores whole a content whose base is at the depth cap, or whose delta would not save half', async () => {
    const before = text(1000)
    const atCap = await encodeBlob(text(1000, 1), { content: before, hash: contentHash(before), depth: MAX_DEPTH })
    expect(atCap.depth).toBe(0)
    expect(parseHeader(atCap.bytes, atCap.bytes.length)).toMatchObject({ kind: 'whole', compressed: true })
    const rewritten = randomBytes(4000)
    const base = Buffer.concat([Buffer.from('same start '), randomBytes(4000)])
    const mostlyNew = await encodeBlob(Buffer.concat([Buffer.from('same start '), rewritten]), { content: base, hash: contentHash(base), depth: 0 })
    expect(mostlyNew.depth).toBe(0)
  })

  it('compresses a whole content when that saves, and writes it raw when it does not', async () => {
    const source = text(1000)
    const packed = await encodeBlob(source)
    expect(packed.bytes.length).toBeLessThan(source.length / 5)
    expect(Buffer.from((await decode(packed.bytes)).content).equals(source)).toBe(true)
    const noise = randomBytes(5000)
    expect(Buffer.from((await encodeBlob(noise)).bytes).equals(noise)).toBe(true)
    expect(Buffer.from((await encodeBlob(Buffer.from('tiny'))).bytes).toString()).toBe('tiny')
  })

  it('encodes a content that starts with the magic bytes, so it is never read as a header', async () => {
    const tricky = Buffer.concat([MAGIC, Buffer.from([1, 1, 0, 1]), randomBytes(100)])
    const { bytes } = await encodeBlob(tricky)
    expect(bytes.length).toBe(WHOLE_HEADER + tricky.length)
    const { header, content } = await decode(bytes)
    expect(header).toMatchObject({ kind: 'whole', compressed: false })
    expect(Buffer.from(content).equals(tricky)).toBe(true)
  })
})
