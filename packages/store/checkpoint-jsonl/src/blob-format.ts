/**
 * How one content is laid out in its blob file. A file that starts with `MAGIC` is encoded: a fixed
 * header, then the payload (brotli-compressed or not). A file without it is the content's raw bytes
 * (what this store wrote before contents were encoded, and still writes when encoding saves nothing).
 *
 *   0  MAGIC (8)  8 version (1)  9 kind: 0 whole, 1 delta  10 codec: 0 none, 1 brotli  11 depth
 *   12 the content's length (u48)
 *   whole: 18 payload = the content
 *   delta: 18 base hash (32)  50 prefix length (u48)  56 suffix length (u48)  62 payload = the middle
 *
 * A delta's content is the base's first `prefix` bytes, the middle, then the base's last `suffix` bytes.
 */

import { promisify } from 'node:util'
import { brotliCompress, brotliDecompress, constants } from 'node:zlib'
import { kMaxLength } from 'node:buffer'

/** The first bytes of an encoded blob (binary, PNG-style, so a text file hardly starts with them). */
export const MAGIC = Buffer.from([0x89, 0x52, 0x43, 0x4b, 0x42, 0x0d, 0x0a, 0x1a])
const VERSION = 1
/** Header bytes of a whole and of a delta blob. */
export const WHOLE_HEADER = 18
export const DELTA_HEADER = 62
/** The deepest delta chain written: a content whose base is at this depth is stored whole. */
export const MAX_DEPTH = 20
/** Brotli quality 3: about as fast as gzip -1, and smaller on source text. */
const QUALITY = 3
/** Bytes compared at a time when looking for the common prefix and suffix. */
const CHUNK = 512

const compress = promisify(brotliCompress)
const decompress = promisify(brotliDecompress)

/** What a blob's header says. `raw`: the file is the content itself. */
export type BlobHeader =
  | { readonly kind: 'raw'; readonly length: number; readonly depth: 0 }
  | { readonly kind: 'whole'; readonly length: number; readonly depth: 0; readonly compressed: boolean }
  | { readonly kind: 'delta'; readonly length: number; readonly depth: number; readonly compressed: boolean; readonly base: string; readonly prefix: number; readonly suffix: number }

/** A content's base, as the store knows it at `append`: its bytes, hash, and the depth it is stored at. */
export interface DeltaBase {
  readonly content: Uint8Array
  readonly hash: string
  readonly depth: number
}

/** Whether `bytes` starts with `MAGIC`. */
function hasMagic(bytes: Uint8Array): boolean {
  return bytes.length >= MAGIC.length && MAGIC.equals(bytes.subarray(0, MAGIC.length))
}

/**
 * The header of a blob from its first bytes (`DELTA_HEADER` of them suffice) and the file's size.
 * A file without `MAGIC` is raw; `undefined` when it has `MAGIC` but no header this version reads.
 */
export function parseHeader(head: Uint8Array, fileSize: number): BlobHeader | undefined {
  if (!hasMagic(head)) return { kind: 'raw', length: fileSize, depth: 0 }
  const bytes = Buffer.from(head.buffer, head.byteOffset, head.byteLength)
  if (bytes.length < WHOLE_HEADER || bytes[8] !== VERSION) return undefined
  const [kind, codec, depth] = [bytes[9], bytes[10], bytes[11]] as [number, number, number]
  const length = bytes.readUIntBE(12, 6)
  if (codec > 1 || length > kMaxLength) return undefined
  const compressed = codec === 1
  if (kind === 0 && depth === 0) return { kind: 'whole', length, depth: 0, compressed }
  if (kind !== 1 || depth < 1 || bytes.length < DELTA_HEADER) return undefined
  const base = bytes.subarray(18, 50).toString('hex')
  const prefix = bytes.readUIntBE(50, 6)
  const suffix = bytes.readUIntBE(56, 6)
  if (prefix + suffix > length) return undefined
  return { kind: 'delta', length, depth, compressed, base, prefix, suffix }
}

/**
 * The file for `content`: a delta against `base` when that saves at least half of the content's
 * bytes and the base is below `MAX_DEPTH`, else the content whole, compressed when that saves.
 * Whole and not compressible, it is written raw (no header), unless it starts with `MAGIC` itself.
 */
export async function encodeBlob(content: Uint8Array, base?: DeltaBase): Promise<{ bytes: Uint8Array; depth: number }> {
  if (base && base.depth < MAX_DEPTH) {
    const { prefix, suffix } = commonEnds(base.content, content)
    const middle = content.subarray(prefix, content.length - suffix)
    if (DELTA_HEADER + middle.length <= content.length / 2) {
      const { payload, compressed } = await maybeCompress(middle)
      const header = Buffer.alloc(DELTA_HEADER)
      writeCommon(header, 1, compressed, base.depth + 1, content.length)
      header.write(base.hash, 18, 'hex')
      header.writeUIntBE(prefix, 50, 6)
      header.writeUIntBE(suffix, 56, 6)
      return { bytes: Buffer.concat([header, payload]), depth: base.depth + 1 }
    }
  }
  const { payload, compressed } = await maybeCompress(content, WHOLE_HEADER)
  if (!compressed && !hasMagic(content)) return { bytes: content, depth: 0 }
  const header = Buffer.alloc(WHOLE_HEADER)
  writeCommon(header, 0, compressed, 0, content.length)
  return { bytes: Buffer.concat([header, payload]), depth: 0 }
}

/** Why a blob's bytes cannot be decoded; the store turns it into `CHECKPOINT_BLOB_DAMAGED`. */
export class BlobFormatError extends Error {}

/** The payload of an encoded blob, decompressed and checked against the header's lengths. */
export async function decodePayload(file: Uint8Array, header: Exclude<BlobHeader, { kind: 'raw' }>): Promise<Buffer> {
  const start = header.kind === 'whole' ? WHOLE_HEADER : DELTA_HEADER
  const expected = header.kind === 'whole' ? header.length : header.length - header.prefix - header.suffix
  const stored = Buffer.from(file.buffer, file.byteOffset + start, file.byteLength - start)
  let payload: Buffer
  try {
    // The limit keeps a damaged stream from inflating past what the header promised.
    payload = header.compressed ? await decompress(stored, { maxOutputLength: Math.max(1, expected) }) : stored
  } catch (error) {
    throw new BlobFormatError(`its compressed bytes do not decode (${(error as Error).message})`)
  }
  if (payload.length !== expected) throw new BlobFormatError(`it holds ${payload.length} bytes where its header says ${expected}`)
  return payload
}

/** A delta's content from its base and middle. */
export function applyDelta(base: Uint8Array, header: Extract<BlobHeader, { kind: 'delta' }>, middle: Uint8Array): Buffer {
  if (header.prefix + header.suffix > base.length) throw new BlobFormatError(`its base is ${base.length} bytes, shorter than the ${header.prefix + header.suffix} it keeps`)
  return Buffer.concat([base.subarray(0, header.prefix), middle, base.subarray(base.length - header.suffix)])
}

/** The lengths of the common prefix and suffix of `a` and `b` (they do not overlap in either). */
export function commonEnds(a: Uint8Array, b: Uint8Array): { prefix: number; suffix: number } {
  const limit = Math.min(a.length, b.length)
  const x = Buffer.from(a.buffer, a.byteOffset, a.byteLength)
  const y = Buffer.from(b.buffer, b.byteOffset, b.byteLength)
  // Whole chunks are compared natively (memcmp); the loop walks bytes only in the chunk that differs.
  let prefix = 0
  while (prefix + CHUNK <= limit && x.compare(y, prefix, prefix + CHUNK, prefix, prefix + CHUNK) === 0) prefix += CHUNK
  while (prefix < limit && x[prefix] === y[prefix]) prefix++
  const room = limit - prefix
  let suffix = 0
  while (suffix + CHUNK <= room && x.compare(y, y.length - suffix - CHUNK, y.length - suffix, x.length - suffix - CHUNK, x.length - suffix) === 0) suffix += CHUNK
  while (suffix < room && x[x.length - 1 - suffix] === y[y.length - 1 - suffix]) suffix++
  return { prefix, suffix }
}

/** `bytes` brotli-compressed when that saves more than `overhead` bytes, else as they are. */
async function maybeCompress(bytes: Uint8Array, overhead = 0): Promise<{ payload: Uint8Array; compressed: boolean }> {
  if (bytes.length <= overhead + 16) return { payload: bytes, compressed: false }
  const packed = await compress(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } })
  return packed.length + overhead < bytes.length ? { payload: packed, compressed: true } : { payload: bytes, compressed: false }
}

function writeCommon(header: Buffer, kind: 0 | 1, compressed: boolean, depth: number, length: number): void {
  MAGIC.copy(header, 0)
  header[8] = VERSION
  header[9] = kind
  header[10] = compressed ? 1 : 0
  header[11] = depth
  header.writeUIntBE(length, 12, 6)
}
