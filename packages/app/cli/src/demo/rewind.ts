/**
 * The demo's last act: the scripted turn rewound, as `rein rewind` would do it, and the README
 * shown back as it was before the edit.
 */

import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import type {} from '@rein/checkpoint'
import type { Session } from '@rein/session'
import { EXIT } from '../exit-codes.ts'
import type { Io } from '../io.ts'
import { jsonLine } from '../json-line.ts'
import type { Renderer } from '../render.ts'
import { resultIncomplete, resultLines } from '../rewind/table.ts'
import { sessionTurns } from '../rewind/turns.ts'
import { neutralize } from '../terminal-text.ts'

export async function rewindDemoTurn(ctx: Context, io: Io, renderer: Renderer, session: Session, json: boolean): Promise<number> {
  const checkpoints = ctx.get('checkpoints')
  const turn = sessionTurns(session.events).at(-1)
  if (!checkpoints || turn?.anchor === undefined) return EXIT.ok
  renderer.notice(`\nundo: rein rewind ${session.id} --to ${turn.turn} puts the files back as they were before turn ${turn.turn}; the demo does it now`)
  const result = await checkpoints.rewind(session.id, turn.anchor)
  if (json) io.stdout.write(`${jsonLine({ type: 'rewind', turn: turn.turn, ...result })}\n`)
  else io.stdout.write(`${neutralize([`rewound session ${session.id} to before turn ${turn.turn}`, ...resultLines(result, session.header.cwd)].join('\n'))}\n`)
  const readme = await readFile(join(session.header.cwd, 'README.md'), 'utf8')
  const line = readme.split('\n').find((text) => text.includes('files')) ?? ''
  renderer.notice(`README.md is as it was before the turn, typo included: "${line.trim()}"`)
  return resultIncomplete(result) ? EXIT.rewindIncomplete : EXIT.ok
}
