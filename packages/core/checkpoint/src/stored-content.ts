/** The contents a restore writes, read from the store and checked against their hash. */

import { ReinError } from '@rein/base'
import { contentHash } from './hash.ts'
import type { CheckpointStore, PlanItem } from './types.ts'

/** The content, checked against its hash: a damaged blob fails this file, it is never written. */
export async function verifiedBlob(store: CheckpointStore, sessionId: string, hash: string): Promise<Uint8Array> {
  const content = await store.blob(sessionId, hash)
  if (contentHash(content) !== hash) throw new ReinError('CHECKPOINT_BLOB_DAMAGED', `checkpoint content ${hash} does not match its hash; the file was left as it is`, { details: { hash } })
  return content
}

/**
 * The plan's items with each restore whose content cannot be read back (missing, damaged) as
 * `skipped`: the rewind would fail it, so a dry run must not promise it. One content at a time,
 * as the rewind reads them, so memory holds one file's bytes, not the plan's.
 */
export async function unreadableSkipped(items: readonly PlanItem[], store: CheckpointStore, sessionId: string, describe: (error: unknown) => string): Promise<PlanItem[]> {
  const checked: PlanItem[] = []
  for (const item of items) {
    if (item.action !== 'restore' || item.before === null) {
      checked.push(item)
      continue
    }
    try {
      await verifiedBlob(store, sessionId, item.before)
      checked.push(item)
    } catch (error) {
      checked.push({ ...item, action: 'skipped', reason: `cannot be restored: ${describe(error)}` })
    }
  }
  return checked
}
