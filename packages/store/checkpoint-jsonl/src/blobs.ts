/**
 * A session's blob folder: writes a content once under its hash (a delta of its base when the
 * caller knows one), reads it back through its delta chain, and finds the bases kept contents need.
 */

import { randomUUID } from 'node:crypto'
import { open, readFile, rename, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { ReinError, openPrivateFile } from '@rein/base'
import { contentHash, isContentHash } from '@rein/checkpoint'
import { BlobFormatError, DELTA_HEADER, applyDelta, decodePayload, encodeBlob, parseHeader, type BlobHeader, type DeltaBase } from './blob-format.ts'
import { syncFolder, type Sync } from './durable.ts'

/** Links followed before a chain is called damaged: the header's depth is one byte, so none is longer. */
const CHAIN_LIMIT = 255

/** A stored content: its hash and the depth of its delta chain (0: whole). */
export interface StoredContent {
  readonly hash: string
  readonly depth: number
}

/**
 * How `writeContent` stores a content: `base` to store it as a delta of, `asBase` when it is about
 * to be one, and `intact`: the hashes this process wrote or read back whole (it adds to them).
 */
export interface WriteOptions {
  readonly base?: DeltaBase | undefined
  readonly asBase?: boolean
  readonly intact: Set<string>
}

/**
 * Stores `content` under its hash unless a file of that content is there (its header's length
 * matches): temp file, fsync, rename, folder fsync. A delta of `base` when that saves; a name that
 * exists but does not match is rewritten whole, so a chain never loops back. With `asBase`, an
 * existing file not known intact is read back through its chain first, and rewritten whole unless
 * it gives `content`: a delta is never built on a base that is already damaged.
 */
export async function writeContent(folder: string, content: Uint8Array, options: WriteOptions, sync: Sync): Promise<StoredContent> {
  const hash = contentHash(content)
  const target = join(folder, hash)
  const existing = await inspect(target)
  if (existing && existing.length === content.length && (!options.asBase || options.intact.has(hash) || await holds(folder, hash, content))) {
    if (options.asBase) options.intact.add(hash)
    return { hash, depth: existing.depth }
  }
  const encoded = await encodeBlob(content, existing || options.base?.hash === hash ? undefined : options.base)
  const temp = join(folder, `.${hash}.${process.pid}.${randomUUID()}.tmp`)
  const handle = await openPrivateFile(temp, 'wx')
  try {
    try {
      // writeFile loops until every byte is written, or throws.
      await handle.writeFile(encoded.bytes)
      await sync(handle)
    } finally {
      await handle.close()
    }
    await rename(temp, target)
    await syncFolder(folder, sync)
  } catch (error) {
    await unlink(temp).catch(() => undefined)
    throw error
  }
  options.intact.add(hash)
  return { hash, depth: encoded.depth }
}

/** Names the session and blob folder in a read's errors. */
export interface ReadContext {
  readonly sessionId: string
  readonly folderName: string
}

/**
 * The content with `hash`, rebuilt through its delta chain. An encoded content is checked against
 * its hash (a raw one is returned as read: the caller checks it); when that fails, the chain is read
 * again checking every link, to name the one at fault. A file missing anywhere in the chain is
 * `CHECKPOINT_BLOB_MISSING`, a damaged one `CHECKPOINT_BLOB_DAMAGED`.
 */
export async function readContent(folder: string, hash: string, context: ReadContext): Promise<Uint8Array> {
  if (!isContentHash(hash)) throw blobError('CHECKPOINT_BLOB_MISSING', hash, hash, 'is not a content hash', context)
  const fast = await rebuild(folder, hash, [], false, context).catch(() => undefined)
  if (fast && (fast.raw || contentHash(fast.content) === hash)) return fast.content
  return (await rebuild(folder, hash, [], true, context)).content
}

/**
 * Reads `current` and, for a delta, its base. `strict` checks every link against its hash and
 * takes a file that fails to decode but matches its hash as raw (a content written before encoding
 * existed may itself start with the magic bytes); otherwise only the caller checks the result.
 */
async function rebuild(folder: string, current: string, chain: string[], strict: boolean, context: ReadContext): Promise<{ content: Uint8Array; raw: boolean }> {
  const top = chain[0] ?? current
  const fail = (code: 'CHECKPOINT_BLOB_MISSING' | 'CHECKPOINT_BLOB_DAMAGED', problem: string, cause?: unknown) => blobError(code, top, current, problem, context, cause)
  chain.push(current)
  let file: Buffer
  try {
    file = await readFile(join(folder, current))
  } catch (error) {
    throw fail('CHECKPOINT_BLOB_MISSING', `is missing from the session's ${context.folderName} folder`, error)
  }
  const header = parseHeader(file, file.length)
  const checked = strict && current !== top
  if (header?.kind === 'raw') {
    if (!checked || contentHash(file) === current) return { content: file, raw: true }
    throw fail('CHECKPOINT_BLOB_DAMAGED', 'does not match its hash')
  }
  let content: Uint8Array
  try {
    if (!header) throw new BlobFormatError('its header is one this version cannot read')
    const payload = await decodePayload(file, header)
    if (header.kind === 'whole') content = payload
    else if (chain.length > CHAIN_LIMIT || chain.includes(header.base)) throw new BlobFormatError(`its delta chain loops or is longer than ${CHAIN_LIMIT}`)
    else content = applyDelta((await rebuild(folder, header.base, chain, strict, context)).content, header, payload)
  } catch (error) {
    if (strict && contentHash(file) === current) return { content: file, raw: true }
    if (error instanceof BlobFormatError) throw fail('CHECKPOINT_BLOB_DAMAGED', `is damaged: ${error.message}`, error)
    throw error
  }
  if (!strict || contentHash(content) === current) return { content, raw: false }
  if (contentHash(file) === current) return { content: file, raw: true }
  throw fail('CHECKPOINT_BLOB_DAMAGED', 'does not match its hash once rebuilt')
}

function blobError(code: string, hash: string, at: string, problem: string, context: ReadContext, cause?: unknown): ReinError {
  const message = at === hash ? `checkpoint content ${hash} ${problem}` : `checkpoint content ${hash} cannot be rebuilt: its delta chain needs ${at}, which ${problem}`
  return new ReinError(code, message, { cause, details: { sessionId: context.sessionId, hash, ...(at === hash ? {} : { base: at }) } })
}

/** Whether the stored content `hash` reads back as `content`. */
async function holds(folder: string, hash: string, content: Uint8Array): Promise<boolean> {
  const stored = await readContent(folder, hash, { sessionId: '', folderName: '' }).catch(() => undefined)
  return stored !== undefined && Buffer.from(content).equals(stored)
}

/** The stored depth and length of the content in `file` (its header only); `undefined` when there is none. */
async function inspect(file: string): Promise<{ depth: number; length: number; base?: string } | undefined> {
  let handle
  try {
    handle = await open(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  let header: BlobHeader | undefined
  try {
    const { size } = await handle.stat()
    const head = Buffer.alloc(Math.min(size, DELTA_HEADER))
    const { bytesRead } = await handle.read(head, 0, head.length, 0)
    header = parseHeader(head.subarray(0, bytesRead), size)
  } finally {
    await handle.close()
  }
  // A header this version cannot read: a length no content has, so the name gets rewritten.
  if (!header) return { depth: 0, length: -1 }
  return { depth: header.depth, length: header.length, ...(header.kind === 'delta' ? { base: header.base } : {}) }
}

/** `named` and every base their delta chains need, transitively; a base whose file is gone ends its chain. */
export async function withBases(folder: string, named: ReadonlySet<string>, batch: number): Promise<Set<string>> {
  const needed = new Set(named)
  let pending = [...named]
  while (pending.length > 0) {
    const next: string[] = []
    for (let start = 0; start < pending.length; start += batch) {
      await Promise.all(pending.slice(start, start + batch).map(async (hash) => {
        const base = (await inspect(join(folder, hash)))?.base
        if (base !== undefined && !needed.has(base)) {
          needed.add(base)
          next.push(base)
        }
      }))
    }
    pending = next
  }
  return needed
}
