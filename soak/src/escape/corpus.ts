/**
 * The escape corpus (soak/corpus/escape/cases.json): calls that try to get out of the workspace,
 * as data. Strings may hold placeholders filled per ground: `{ws}`, `{base}`, `{outside}`, `{pid}`
 * (this process), `{n}` (a counter, for fresh names) and `{repeat:N:text}` (text N times).
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Ground } from './sentinel.ts'

/** The tools a case may call; `bash` probes only its `workdir`. */
export type EscapeTool = 'read' | 'write' | 'edit' | 'multi_edit' | 'glob' | 'grep' | 'bash'

export interface EscapeCase {
  readonly label: string
  readonly tool: EscapeTool
  readonly args: Record<string, unknown>
  /** An error code, `ok`, `error` (any refusal) or `any` (a race, either is fine). */
  readonly expect: string
  /** Where the case came from. */
  readonly from: string
  /** A call inside the workspace that must work: the suite cannot pass by refusing everything. */
  readonly control?: boolean
  /** Read the path first (the edit tools need a fresh read), as a model would. */
  readonly readFirst?: boolean
  /** The path is a hard link to a file outside: its content may be read, never changed. */
  readonly hardLink?: boolean
  /** Run while another process flips `flip` and `flipfile` between inside and a link out. */
  readonly race?: boolean
  /** How many times to run it (a race needs many tries). */
  readonly repeat?: number
}

const FILE = fileURLToPath(new URL('../../corpus/escape/cases.json', import.meta.url))

/** Every case of the corpus, as stored. */
export function loadCorpus(): EscapeCase[] {
  return (JSON.parse(readFileSync(FILE, 'utf8')) as { cases: EscapeCase[] }).cases
}

let counter = 0

/** `value` with its placeholders filled for `ground` (strings inside arrays and objects too). */
export function fill<T>(value: T, ground: Ground): T {
  if (typeof value === 'string') {
    return value
      .replace(/\{repeat:(\d+):([^}]*)\}/g, (_all, times: string, text: string) => text.repeat(Number(times)))
      .replaceAll('{ws}', ground.ws)
      .replaceAll('{base}', ground.base)
      .replaceAll('{outside}', ground.outside)
      .replaceAll('{pid}', String(process.pid))
      .replaceAll('{n}', () => String(++counter)) as T
  }
  if (Array.isArray(value)) return value.map((item: unknown) => fill(item, ground)) as T
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fill(item, ground)])) as T
  }
  return value
}
