/**
 * The work every kill-suite run asks for, and the scripted model that asks for it. The model
 * decides each reply from the conversation alone (which of its calls have results), never from how
 * many requests came before, so a process killed anywhere and resumed gets the same next reply.
 *
 * The parent, in one turn: (1) reads seed.txt, writes a.txt and calls `note` (replay-safe, counted);
 * (2) edits seed.txt, runs a bash command that appends its call id to effects.log (not replay-safe)
 * and starts a background job that does the same after a short sleep; (3) delegates to a subagent,
 * which writes b.txt and runs its own bash append; (4) answers. The fixture plugin also appends the
 * call id of every `write` and `edit` dispatch to effects.log (not replay-safe either). effects.log
 * lies outside the workspace, so a rewind never moves it aside.
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { MockReply, RecordedRequest } from '@rein/testkit'

/** The user's task; the final log must hold it exactly once. */
export const TASK = 'Do the soak work: files, a command, a background job and a subagent.'
/** The subagent's task (its first user message). */
const CHILD_TASK = 'Soak child: write b.txt and run one command.'
/** The parent's last answer. */
const FINAL_ANSWER = 'All done.'
/** What the workspace holds before the first turn; `rein rewind --to 1` must bring it back. */
export const SEED: Readonly<Record<string, string>> = { 'seed.txt': 'seed line\n', 'notes/keep.md': 'keep me\n' }

const PLUGIN = fileURLToPath(new URL('../../fixtures/kill/kill-plugin.ts', import.meta.url))

/** A run's folders: the workspace (cwd), REIN_HOME, and the effect files outside both. */
export interface RunFolders {
  root: string
  workspace: string
  home: string
  sessions: string
  /** One line per run of a non-replay-safe bash effect: the call id. */
  effects: string
  /** One line per run of the replay-safe `note`: `<callId> <pid> <nonce>`. */
  runs: string
}

/** Makes a run's folders and seeds the workspace. */
export function prepareRun(root: string): RunFolders {
  const folders: RunFolders = {
    root,
    workspace: join(root, 'work'),
    home: join(root, 'home'),
    sessions: join(root, 'home', 'sessions'),
    effects: join(root, 'effects.log'),
    runs: join(root, 'runs.log'),
  }
  for (const [path, content] of Object.entries(SEED)) {
    mkdirSync(join(folders.workspace, path, '..'), { recursive: true })
    writeFileSync(join(folders.workspace, path), content)
  }
  mkdirSync(folders.home, { recursive: true, mode: 0o700 })
  return folders
}

/**
 * Writes `$REIN_HOME/cordis.yml`, which every `rein` of the run loads: the built-in composition's rows
 * (packages/app/cli/src/composition.ts) with the model at `baseURL`, plus the kill plugin.
 */
export function writeComposition(folders: RunFolders, baseURL: string): void {
  writeFileSync(join(folders.home, 'cordis.yml'), cordisYml(folders, baseURL))
}

function cordisYml(folders: RunFolders, baseURL: string): string {
  const row = (id: string, name: string, config?: object) => `- { id: ${id}, name: '${name}'${config ? `, config: ${JSON.stringify(config)}` : ''} }`
  return [
    row('llm', '@rein/llm'),
    row('tools', '@rein/tools'),
    row('sessions', '@rein/session'),
    row('session-store', '@rein/session-jsonl', { root: folders.sessions }),
    row('memory', '@rein/memory'),
    row('memory-store', '@rein/memory-sqlite', { file: join(folders.home, 'memory.db') }),
    row('checkpoints', '@rein/checkpoint', { home: folders.home }),
    row('checkpoint-store', '@rein/checkpoint-jsonl'),
    row('fs', '@rein/tool-fs'),
    row('jobs', '@rein/jobs'),
    // REIN_SOAK_RUN (the run's marker) reaches every command, so /proc shows what a run left running.
    row('bash', '@rein/tool-bash', { passEnv: ['REIN_SOAK_RUN'] }),
    row('telemetry', '@rein/telemetry'),
    row('openai', '@rein/llm-openai', { baseURL, label: 'mock', apiKeyEnv: false }),
    row('agents', '@rein/agent', { provider: 'openai', model: 'm1' }),
    row('subagents', '@rein/subagents'),
    row('kill', PLUGIN, { runs: folders.runs, workspace: folders.workspace, effects: folders.effects }),
    '',
  ].join('\n')
}

interface WireMessage { role: string; content?: unknown; tool_call_id?: string }

const call = (id: string, name: string, args: Record<string, unknown>) => ({ toolCall: { id, name, arguments: JSON.stringify(args) } })

/**
 * The scripted model of a run. Each command appends its call id to effects.log (the effect that
 * must not repeat) and leaves a 30-second process behind in a way only rein can clean up: a
 * foreground command a detached `sleep 30` (the bash tool stops what a command leaves running; a
 * crash leaves it to the next resume), the background job a `sleep 30` once it finds its rein gone
 * (the next resume reaps it). So a process left running is still there when the session is
 * finished, and `marker` (also in the environment, REIN_SOAK_RUN) finds it in /proc.
 */
export function model(folders: RunFolders, marker: string): (request: RecordedRequest) => MockReply {
  const append = (token: string) => `echo ${token} >> '${folders.effects}'`
  const leftBehind = '(sleep 30 >/dev/null 2>&1 &)'
  const parent: readonly (readonly [readonly string[], MockReply])[] = [
    [['p1_read', 'p1_write', 'p1_note'], { steps: [
      { text: 'Starting.' },
      call('p1_read', 'read', { path: 'seed.txt' }),
      call('p1_write', 'write', { path: 'a.txt', content: 'alpha\n' }),
      call('p1_note', 'note', { text: 'step one' }),
    ] }],
    [['p2_read', 'p2_edit', 'p2_bash', 'p2_job'], { steps: [
      call('p2_read', 'read', { path: 'seed.txt' }),
      call('p2_edit', 'edit', { path: 'seed.txt', old_string: 'seed line', new_string: 'edited line' }),
      call('p2_bash', 'bash', { command: `${append('p2_bash')}; ${leftBehind}; sleep 0.2 # ${marker}`, description: 'Append and wait' }),
      call('p2_job', 'bash', { command: `sleep 0.4; ${append('p2_job')}; kill -0 $PPID 2>/dev/null || sleep 30 # ${marker}`, description: 'Background append', run_in_background: true }),
    ] }],
    [['p3_sub'], { steps: [call('p3_sub', 'subagent', { description: 'Write b.txt', prompt: CHILD_TASK })] }],
  ]
  const child: readonly (readonly [readonly string[], MockReply])[] = [
    [['c1_write', 'c1_bash'], { steps: [
      call('c1_write', 'write', { path: 'b.txt', content: 'beta\n' }),
      call('c1_bash', 'bash', { command: `${append('c1_bash')}; ${leftBehind}; sleep 0.2 # ${marker}`, description: 'Child append' }),
    ] }],
  ]
  return (request) => {
    const messages = ((request.body as { messages?: WireMessage[] }).messages ?? [])
    const first = messages.find((message) => message.role === 'user')
    const answered = new Set(messages.filter((message) => message.role === 'tool').map((message) => message.tool_call_id))
    const isChild = textOf(first?.content).includes(CHILD_TASK)
    const plan = isChild ? child : parent
    const next = plan.find(([ids]) => !ids.some((id) => answered.has(id)))
    if (next) return next[1]
    return { steps: [{ text: isChild ? 'Child done.' : FINAL_ANSWER }] }
  }
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map((part) => (part as { text?: string }).text ?? '').join('')
  return ''
}
