/**
 * `toolContextFixture`: the `ToolRun` a tool body gets inside an agent, for testing a tool on its
 * own — identity, workspace root, a working spill writer, and any provider fields you pass.
 */

import { randomBytes } from 'node:crypto'
import { createWriteStream, mkdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from '@deepseek-ai/cordis'
import type { OpenSpill, RunIdentity, ToolRun } from '@rein/tools'

/** What a test may set; everything else gets a default. */
export type ToolContextOverrides = Partial<Omit<ToolRun, 'identity'>> & { identity?: Partial<RunIdentity> }

const DEFAULT_IDENTITY: RunIdentity = Object.freeze({
  agent: 'main',
  sessionId: 'session-test',
  conversationId: 'session-test',
  runId: 'run_test',
  turnId: 'session-test/1',
  anchor: 'message-test',
  depth: 0,
})

/**
 * A frozen `ToolRun`. Defaults: call id `call_test`, a signal that never aborts, `cwd` and
 * `workspaceRoot` the process's cwd (each defaults to the other), a real logger, a top-level
 * identity, and a spill writer into `spillFolder` — by default one 0700 temporary folder per test
 * process, made at the first spill — named as the agent names spills (`<callId>.<label>.txt`).
 */
export function toolContextFixture(overrides: ToolContextOverrides = {}): ToolRun {
  const { identity, cwd, workspaceRoot, ...rest } = overrides
  const root = workspaceRoot ?? cwd ?? process.cwd()
  const callId = overrides.callId ?? 'call_test'
  const spillFolder = overrides.spillFolder ?? sharedSpillFolder()
  return Object.freeze({
    callId,
    signal: new AbortController().signal,
    logger: new Context().logger('tool'),
    spill: spillInto(spillFolder, callId),
    sessionId: identity?.sessionId ?? DEFAULT_IDENTITY.sessionId,
    ...rest,
    spillFolder,
    cwd: cwd ?? root,
    workspaceRoot: root,
    identity: Object.freeze({ ...DEFAULT_IDENTITY, ...identity }),
  })
}

let shared: string | undefined

/**
 * One folder per test process, made (0700) only when something spills into it, so a test that
 * never spills leaves nothing behind; removed when the process exits, where that hook runs.
 */
function sharedSpillFolder(): string {
  if (shared === undefined) {
    const folder = join(tmpdir(), `rein-spill-${process.pid}-${randomBytes(6).toString('hex')}`)
    process.once('exit', () => rmSync(folder, { recursive: true, force: true }))
    shared = folder
  }
  return shared
}

/** Like the agent's: a new private file per label, `-2`, `-3`… when a label repeats. */
function spillInto(folder: string, callId: string): OpenSpill {
  const used = new Map<string, number>()
  return async (label) => {
    const n = (used.get(label) ?? 0) + 1
    used.set(label, n)
    mkdirSync(folder, { recursive: true, mode: 0o700 })
    const path = join(folder, `${callId}.${label}${n > 1 ? `-${n}` : ''}.txt`)
    return { path, stream: createWriteStream(path, { flags: 'w', mode: 0o600 }) }
  }
}
