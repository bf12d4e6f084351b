/**
 * Byte-level damage for the fuzzers: what a broken proxy, a torn write or a bad disk does to a
 * stream or a file. Every choice comes from the caller's seeded `Rng`, so an input is reproducible.
 */

import type { Rng } from '../plan.ts'

/** Text that exercises UTF-8: 2-, 3- and 4-byte sequences, combining marks, line separators, NUL. */
const PIECES = ['a', 'Hello', ' ', 'é', 'naïve', '☃', '😀', '👩‍💻', 'e\u0301', '漢字', '\u2028', '\u0000', '"', '\\', '\n', '{', '}', 'data:', '\r', 'ß', '\uFFFD'] as const

/** A short random string built from `PIECES` (and sometimes a lone surrogate, which JSON escapes). */
export function randomText(r: Rng, maxPieces = 6): string {
  let text = ''
  const n = 1 + r.int(maxPieces)
  for (let i = 0; i < n; i++) text += r.chance(0.02) ? String.fromCharCode(0xd800 + r.int(0x800)) : r.pick(PIECES)
  return text
}

/** `n` random bytes. */
export function randomBytes(r: Rng, n: number): Uint8Array {
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i++) out[i] = r.int(256)
  return out
}

/** Byte sequences that are not valid UTF-8: a lone continuation, a cut 4-byte lead, an overlong form, 0xFF. */
const INVALID_UTF8: readonly (readonly number[])[] = [[0x80], [0xf0, 0x9f], [0xc0, 0xaf], [0xff], [0xed, 0xa0, 0x80], [0xe2, 0x98]]

export type ByteMutation = 'cut' | 'duplicate' | 'swap' | 'flip' | 'insert' | 'delete' | 'invalid-utf8' | 'zeros'

/** All byte mutations, for picking. */
export const BYTE_MUTATIONS: readonly ByteMutation[] = ['cut', 'duplicate', 'swap', 'flip', 'insert', 'delete', 'invalid-utf8', 'zeros']

/**
 * `bytes` with one `kind` of damage at a random place; returns new bytes (never a view: `bytes` is
 * left as it was, even when it is a Buffer, whose `slice` shares memory) and where the damage starts.
 */
export function mutateBytes(r: Rng, input: Uint8Array, kind: ByteMutation): { bytes: Uint8Array; at: number } {
  const bytes = new Uint8Array(input)
  const n = bytes.length
  if (n === 0) return { bytes: kind === 'insert' ? randomBytes(r, 1 + r.int(8)) : bytes, at: 0 }
  const at = r.int(n)
  switch (kind) {
    case 'cut':
      return { bytes: bytes.subarray(0, at), at }
    case 'duplicate': {
      const end = Math.min(n, at + 1 + r.int(64))
      return { bytes: concat([bytes.subarray(0, end), bytes.subarray(at, end), bytes.subarray(end)]), at: end }
    }
    case 'swap': {
      const other = r.int(n)
      const copy = bytes
      const was = copy[at]!
      copy[at] = copy[other]!
      copy[other] = was
      return { bytes: copy, at: Math.min(at, other) }
    }
    case 'flip': {
      bytes[at] = bytes[at]! ^ (1 << r.int(8))
      return { bytes, at }
    }
    case 'insert':
      return { bytes: concat([bytes.subarray(0, at), randomBytes(r, 1 + r.int(16)), bytes.subarray(at)]), at }
    case 'delete': {
      const end = Math.min(n, at + 1 + r.int(32))
      return { bytes: concat([bytes.subarray(0, at), bytes.subarray(end)]), at }
    }
    case 'invalid-utf8':
      return { bytes: concat([bytes.subarray(0, at), Uint8Array.from(r.pick(INVALID_UTF8)), bytes.subarray(at)]), at }
    case 'zeros': {
      // What a filesystem can leave after a power cut: the size grew, the data did not arrive.
      const end = Math.min(n, at + 1 + r.int(512))
      bytes.fill(0, at, end)
      return { bytes, at }
    }
  }
}

/** The byte arrays joined. */
function concat(parts: readonly Uint8Array[]): Uint8Array {
  return Uint8Array.from(Buffer.concat(parts))
}

/**
 * `bytes` cut into pieces the way a network may deliver them: whole, in fixed sizes, at random
 * places, or deliberately inside UTF-8 sequences.
 */
const MAX_CUTS = 24

export function splitBytes(r: Rng, bytes: Uint8Array): Uint8Array[] {
  const n = bytes.length
  if (n === 0) return [bytes]
  const cuts = new Set<number>()
  switch (r.int(5)) {
    case 0:
      break
    case 1: {
      const size = r.pick([1, 2, 3, 5, 7, 64, 1024])
      for (let i = size; i < n; i += size) cuts.add(i)
      break
    }
    case 2:
      for (let i = 0, k = 1 + r.int(12); i < k; i++) cuts.add(1 + r.int(n))
      break
    default: {
      // Inside multi-byte sequences: after a lead byte or a continuation byte.
      for (let i = 1; i < n; i++) if (bytes[i - 1]! >= 0x80 && r.chance(0.5)) cuts.add(i)
      for (let i = 0, k = r.int(4); i < k; i++) cuts.add(1 + r.int(n))
    }
  }
  let points = [...cuts].filter((cut) => cut > 0 && cut < n).sort((a, b) => a - b)
  // Each piece costs a socket write and a read: keep fine splitting to one stretch of the stream.
  if (points.length > MAX_CUTS) {
    const from = r.int(points.length - MAX_CUTS)
    points = points.slice(from, from + MAX_CUTS)
  }
  const pieces: Uint8Array[] = []
  let from = 0
  for (const cut of points) {
    pieces.push(bytes.subarray(from, cut))
    from = cut
  }
  pieces.push(bytes.subarray(from))
  return pieces
}
