// What the rewind and show tests compose besides the harness's rows, and the replies they script.
import type { MockReply } from '@rein/testkit'

/** tool-fs, and checkpoints kept by checkpoint-jsonl. */
export const CHECKPOINT_ROWS = [
  "- { id: fs, name: '@rein/tool-fs' }",
  "- { id: checkpoints, name: '@rein/checkpoint' }",
  "- { id: checkpoint-store, name: '@rein/checkpoint-jsonl' }",
]

/** A reply of plain text. */
export const answer = (text: string): MockReply => ({ steps: [{ text }] })
