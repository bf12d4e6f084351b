/**
 * A project folder whose cordis.yml points rein at a mock server and keeps its sessions under a
 * given root (a tmpfs, an ext4 image), `rein` run in it (../rein-process.ts), and what its stderr
 * says. The project is adapted from packages/app/cli/tests/harness.ts (`project`).
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runRein, type ReinExit } from '../rein-process.ts'

const SOAK_DIR = fileURLToPath(new URL('../../', import.meta.url))
const TOOLS = fileURLToPath(new URL('./bulk-tool.ts', import.meta.url))

/** A project folder: `dir` holds cordis.yml; `home` is its REIN_HOME (never the user's). */
export interface ReinProject {
  readonly dir: string
  readonly home: string
  remove(): void
}

/** Writes a project whose sessions live in `sessionsRoot` and whose model is the mock at `url`. */
export function reinProject(url: string, sessionsRoot: string): ReinProject {
  const dir = mkdtempSync(join(tmpdir(), 'rein-soak-disk-project-'))
  // As if the packages were installed in this project.
  symlinkSync(join(SOAK_DIR, 'node_modules'), join(dir, 'node_modules'), 'dir')
  writeFileSync(join(dir, 'cordis.yml'), [
    "- { id: llm, name: '@rein/llm', config: { retry: { maxRetries: 0 } } }",
    `- { id: model, name: '@rein/llm-openai', config: { provider: mock, baseURL: '${url}', apiKeyEnv: false } }`,
    "- { id: tools, name: '@rein/tools' }",
    "- { id: sessions, name: '@rein/session' }",
    `- { id: store, name: '@rein/session-jsonl', config: { root: '${sessionsRoot}' } }`,
    "- { id: agents, name: '@rein/agent', config: { provider: mock, model: m } }",
    `- { id: disk-tools, name: '${TOOLS}' }`,
    '',
  ].join('\n'))
  return { dir, home: join(dir, '.rein'), remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * Runs `rein <args>` in `project` with --verbose (so every error prints its code chain). A process
 * still running after `guardMs` is SIGKILLed and reported `hung`: a bound on a hang, not a speed check.
 */
export function spawnRein(project: ReinProject, args: readonly string[], guardMs: number): Promise<ReinExit> {
  return runRein({ cwd: project.dir, args: [...args, '--verbose'], env: { REIN_HOME: project.home }, guardMs })
}

/**
 * The ReinError codes on stderr: `error: CODE: …` (a turn that ended in error) and the `--verbose`
 * cause chain (`CODE: …`, `caused by: CODE: …`) of a thrown one.
 */
export function codesIn(stderr: string): string[] {
  const codes = new Set<string>()
  for (const match of stderr.matchAll(/^(?:\w+: |\s+caused by: )?([A-Z][A-Z0-9_]{2,}): /gm)) codes.add(match[1]!)
  return [...codes]
}

/**
 * A crash rather than a failure rein chose: killed by a signal, an exit code rein does not use,
 * or a stack trace / Node's uncaught-error banner on stderr.
 */
export function crashed(exited: ReinExit): boolean {
  if (exited.signal !== null && !exited.hung) return true
  if (exited.code !== null && ![0, 1, 2, 3, 4, 5, 130].includes(exited.code)) return true
  return /^\s+at .+:\d+:\d+\)?$/m.test(exited.stderr) || /Uncaught|UnhandledPromiseRejection|node:internal/.test(exited.stderr)
}
