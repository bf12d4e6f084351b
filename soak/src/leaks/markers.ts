/**
 * The strings suite 7 plants and then looks for. Each is unique to one run of the suite (a random
 * tail), none is a substring of another, and none is key-shaped, so the provider's scrubbing of
 * key-like text (`sk-…`) cannot hide a content marker. The API key is the one that is key-shaped.
 */

import { randomBytes } from 'node:crypto'

/**
 * What a marker stands for, which decides where it may show (see `allowed` in sweep.ts):
 * - `input`: what the user wrote (prompt, system prompt): the content stores only;
 * - `argument`: what the model passed a tool: the content stores, the workspace files the agent
 *   wrote, and the `[tool]` progress lines rein prints on stderr;
 * - `result`: what a tool read from the workspace: the content stores and the file it came from;
 * - `answer`: the model's text: the content stores and stdout, where `rein run` prints it;
 * - `provider-echo`: text a provider's error body carried: the content stores and stderr, where
 *   rein says why the turn failed.
 */
export type MarkerKind = 'input' | 'argument' | 'result' | 'answer' | 'provider-echo'

/** One planted string and what it stands for. */
export interface Marker {
  readonly name: string
  readonly kind: MarkerKind
  readonly text: string
}

/** The marker names, in planting order. */
const MARKER_NAMES = {
  prompt: 'input',
  system: 'input',
  failingPrompt: 'input',
  resumePrompt: 'input',
  capturePrompt: 'input',
  writeArg: 'argument',
  bashArg: 'argument',
  missingPathArg: 'argument',
  failingBashArg: 'argument',
  memoryArg: 'argument',
  toolResult: 'result',
  spilledResult: 'result',
  answer: 'answer',
  resumeAnswer: 'answer',
  echo401: 'provider-echo',
  echo500: 'provider-echo',
  echoStream: 'provider-echo',
} as const satisfies Record<string, MarkerKind>

/** A planted marker's name. */
type MarkerName = keyof typeof MARKER_NAMES

/** Everything one run of the suite planted. */
export interface Markers {
  readonly byName: Readonly<Record<MarkerName, string>>
  readonly all: readonly Marker[]
  /** The API key, read by llm-openai from an environment variable: it may be nowhere at all. */
  readonly apiKey: string
  /**
   * Also counted as the key: its secret tail alone, so a key cut short or stripped of its `sk-`
   * prefix is still found.
   */
  readonly apiKeyTail: string
}

/** Fresh markers: `LEAKMARK-<NAME>-<hex>` and the key `sk-LEAKMARKER-<hex>`. */
export function plantMarkers(): Markers {
  const byName = {} as Record<MarkerName, string>
  const all: Marker[] = []
  for (const [name, kind] of Object.entries(MARKER_NAMES) as [MarkerName, MarkerKind][]) {
    const text = `LEAKMARK-${name.toUpperCase()}-${randomBytes(6).toString('hex')}`
    byName[name] = text
    all.push({ name, kind, text })
  }
  const tail = randomBytes(16).toString('hex')
  return { byName, all, apiKey: `sk-LEAKMARKER-${tail}`, apiKeyTail: tail.slice(0, 16) }
}
