/** Content addresses: sha256 in hex. */

import { createHash } from 'node:crypto'

/** The sha256 of `content`, hex. */
export function contentHash(content: Uint8Array): string {
  return createHash('sha256').update(content).digest('hex')
}

/** Whether `hash` has the form `contentHash` gives (a store uses it as a file name). */
export function isContentHash(hash: string): boolean {
  return /^[0-9a-f]{64}$/.test(hash)
}
