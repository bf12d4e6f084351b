/**
 * Target (b): JSON payload sequences into `createChunkTranslator`, beyond what
 * packages/llm/llm-openai/tests/translator-fuzz.test.ts does (single random values and one-node
 * mutations, checked for throws only): whole answers from the stream generator with several
 * mutations (prototype keys, huge numbers, deep nesting), both dialects, and checks on what comes
 * out — chunks that reference only opened blocks, one finish last, sane usage, and for an
 * undamaged answer exactly the text, reasoning and arguments that went in.
 */

import { isReinError, type JsonValue } from '@rein/base'
import type { StreamChunk } from '@rein/llm'
import { createChunkTranslator } from '@rein/llm-openai'
import { rng, type Rng } from '../plan.ts'
import { saveInput, savedInputs, shrink } from './corpus.ts'
import { mutateJson, nestedText, randomJson } from './json.ts'
import { validPayloads } from './sse-streams.ts'

export interface TranslatorFigures {
  sequences: number
  payloads: number
  /** Throws that were not a ReinError with a code. */
  stray: number
  /** Chunk sequences that break the stream contract (see `contractProblems`). */
  incoherent: number
  /** Undamaged answers whose translation lost or changed text, reasoning or arguments. */
  translatedWrong: number
  replayed: number
  saved: string[]
  examples: string[]
}

interface Input {
  payloads: JsonValue[]
  sawDone: boolean
  deepseek: boolean
}

/** One sequence: an answer, damaged or not, sometimes pure noise. */
function generate(r: Rng): { input: Input; pristine: boolean } {
  const deepseek = r.chance(0.5)
  let payloads = validPayloads(r, deepseek)
  let pristine = !payloads.some((payload) => typeof payload === 'object' && payload !== null && 'error' in payload)
  const roll = r.int(10)
  if (roll < 5) {
    pristine = false
    for (let i = 0, n = 1 + r.int(4); i < n; i++) {
      const at = r.int(payloads.length)
      payloads[at] = mutateJson(r, payloads[at]!)
    }
  } else if (roll === 5) {
    pristine = false
    payloads = Array.from({ length: 1 + r.int(6) }, () => randomJson(r, 4))
  } else if (roll === 6 && r.chance(0.3)) {
    pristine = false
    // Deep nesting where a string or an object is expected.
    const recipe: Nesting = { levels: r.pick([200, 1000, 7000, 20_000]), inner: r.pick(['"x"', '{}', '1']), object: r.chance(0.5) }
    const deep = JSON.parse(nestedText(recipe.levels, recipe.inner, recipe.object)) as JsonValue
    if (typeof deep === 'object' && deep !== null) RECIPES.set(deep, recipe)
    payloads.splice(r.int(payloads.length), 0, r.pick<JsonValue>([
      { choices: [{ index: 0, delta: { content: deep } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: deep } }] } }] },
      { choices: deep },
      deep,
    ]))
  } else if (roll === 7) {
    pristine = false
    // Odd indices: huge, negative, fractional, repeated.
    payloads.splice(r.int(payloads.length), 0, { choices: [{ index: 0, delta: { tool_calls: [{ index: r.pick([2 ** 31, 1e21, -1, 0.5, 7, Number.MAX_SAFE_INTEGER]), id: 'x', function: { name: 'n', arguments: '{}' } }] } }] })
  }
  return { input: { payloads, sawDone: pristine || r.chance(0.7), deepseek }, pristine }
}

/** What a translator made of `input`, or what escaped it. */
function translate(input: Input): { chunks: StreamChunk[]; error?: unknown } {
  const translator = createChunkTranslator('Fuzz', input.deepseek ? { replayState: { dialect: 'deepseek' } } : {})
  const chunks: StreamChunk[] = []
  try {
    for (const payload of input.payloads) {
      chunks.push(...translator.push(payload))
      translator.usageSoFar()
    }
    chunks.push(...translator.end(input.sawDone))
  } catch (error) {
    return { chunks, error }
  }
  return { chunks }
}

/** Ways a chunk sequence breaks what consumers rely on; empty when it holds. */
function contractProblems(chunks: readonly StreamChunk[], ended: boolean): string[] {
  const problems: string[] = []
  const kinds = new Map<number, string>()
  const closed = new Set<number>()
  chunks.forEach((chunk, i) => {
    switch (chunk.type) {
      case 'block-start':
        if (chunk.index !== kinds.size) problems.push(`#${i}: block ${chunk.index} opened after ${kinds.size} blocks`)
        kinds.set(chunk.index, chunk.blockType)
        break
      case 'text-delta':
      case 'reasoning-delta':
      case 'tool-call-delta': {
        const want = chunk.type === 'text-delta' ? 'text' : chunk.type === 'reasoning-delta' ? 'reasoning' : 'tool-call'
        if (kinds.get(chunk.index) !== want) problems.push(`#${i}: ${chunk.type} for block ${chunk.index} (${kinds.get(chunk.index) ?? 'never opened'})`)
        if (closed.has(chunk.index)) problems.push(`#${i}: ${chunk.type} after block ${chunk.index} ended`)
        if (chunk.type === 'tool-call-delta' && (typeof chunk.id !== 'string' || chunk.id === '')) problems.push(`#${i}: a tool-call delta without an id`)
        if (chunk.type !== 'tool-call-delta' && typeof chunk.text !== 'string') problems.push(`#${i}: a delta whose text is not a string`)
        if (chunk.type === 'tool-call-delta' && typeof chunk.argumentsDelta !== 'string') problems.push(`#${i}: arguments that are not a string`)
        break
      }
      case 'block-end':
        if (!kinds.has(chunk.index)) problems.push(`#${i}: block-end for unopened block ${chunk.index}`)
        if (closed.has(chunk.index)) problems.push(`#${i}: block ${chunk.index} ended twice`)
        closed.add(chunk.index)
        break
      case 'usage': {
        const { usage } = chunk
        const counts = [usage.inputTokens, usage.outputTokens, usage.cacheReadTokens ?? 0, usage.reasoningTokens ?? 0]
        if (counts.some((count) => !Number.isSafeInteger(count) || count < 0)) problems.push(`#${i}: usage ${JSON.stringify(usage)}`)
        break
      }
      case 'finish':
        if (i !== chunks.length - 1) problems.push(`#${i}: finish is not the last chunk`)
        break
    }
  })
  if (ended) {
    if (chunks.at(-1)?.type !== 'finish') problems.push('the stream ended without a finish')
    for (const index of kinds.keys()) if (!closed.has(index)) problems.push(`block ${index} never ended`)
  }
  return problems
}

/** For an undamaged answer: the text, reasoning and per-call arguments that went in, as the blocks say. */
function lostContent(input: Input, chunks: readonly StreamChunk[]): string | undefined {
  let text = ''
  let reasoning = ''
  // Each call's arguments, in the order calls opened. At a wire index, another call opens with a new
  // id and a name after an id the server gave, or with a name and arguments that begin anew after the
  // open call's arguments were whole JSON (a server that sends each call whole, without ids).
  const calls: string[] = []
  const open = new Map<number, { id: string | undefined; call: number }>()
  for (const payload of input.payloads) {
    const choices = (payload as { choices?: { delta?: Record<string, unknown> }[] }).choices ?? []
    for (const { delta = {} } of choices) {
      if (typeof delta.content === 'string') text += delta.content
      if (typeof delta.reasoning_content === 'string') reasoning += delta.reasoning_content
      if (typeof delta.reasoning === 'string') reasoning += delta.reasoning
      for (const [position, call] of ((delta.tool_calls ?? []) as { index?: number; id?: string; function?: { name?: string; arguments?: string } }[]).entries()) {
        const index = call.index ?? position
        const id = typeof call.id === 'string' && call.id !== '' ? call.id : undefined
        const named = typeof call.function?.name === 'string' && call.function.name !== ''
        let current = open.get(index)
        const anotherId = id !== undefined && current?.id !== undefined && current.id !== id
        if (current === undefined || (named && (anotherId || beginsAfterWhole(calls[current.call] ?? '', call.function?.arguments)))) {
          current = { id, call: calls.push('') - 1 }
          open.set(index, current)
        }
        calls[current.call] += call.function?.arguments ?? ''
      }
    }
  }
  const blocks = chunks.flatMap((chunk) => (chunk.type === 'block-end' ? [chunk.block] : []))
  const got = (type: string) => blocks.filter((block) => block.type === type).map((block) => ('text' in block ? block.text : '')).join('')
  if (got('text') !== text) return `text ${JSON.stringify(got('text'))} for ${JSON.stringify(text)}`
  if (got('reasoning') !== reasoning) return `reasoning ${JSON.stringify(got('reasoning'))} for ${JSON.stringify(reasoning)}`
  const made = blocks.flatMap((block) => (block.type === 'tool-call' ? [block.arguments] : []))
  if (JSON.stringify(made) !== JSON.stringify(calls)) return `arguments ${JSON.stringify(made)} for ${JSON.stringify(calls)}`
  return undefined
}

/** Arguments that begin an object after `before`, arguments that are already whole JSON. */
function beginsAfterWhole(before: string, added: string | undefined): boolean {
  if (added === undefined || !/^\s*\{/.test(added) || !before.trimEnd().endsWith('}')) return false
  try {
    JSON.parse(before)
    return true
  } catch {
    return false
  }
}

/** How a deep value was made: saved instead of the value, which JSON.stringify cannot write. */
interface Nesting {
  levels: number
  inner: string
  object: boolean
}

const RECIPES = new WeakMap<object, Nesting>()

/** `input` as JSON; a deep value the generator made is written as its recipe, `{"$nested": …}`. */
function serialize(input: Input): string {
  return JSON.stringify(input, (_key, value: unknown) => {
    const recipe = typeof value === 'object' && value !== null ? RECIPES.get(value) : undefined
    return recipe ? { $nested: recipe } : value
  })
}

/** A saved input, its `{"$nested": …}` recipes made into the deep values again. */
function deserialize(text: string): Input {
  return JSON.parse(text, (_key, value: unknown) => {
    const recipe = (value as { $nested?: Nesting } | null)?.$nested
    return recipe ? JSON.parse(nestedText(recipe.levels, recipe.inner, recipe.object)) as unknown : value
  }) as Input
}

/** Runs `count` generated sequences (seeded) and every saved one. */
export async function fuzzTranslator(seed: number, count: number): Promise<TranslatorFigures> {
  const figures: TranslatorFigures = { sequences: 0, payloads: 0, stray: 0, incoherent: 0, translatedWrong: 0, replayed: 0, saved: [], examples: [] }
  const seen = new Set<string>()
  const check = async (input: Input, pristine: boolean, save: boolean) => {
    figures.sequences++
    figures.payloads += input.payloads.length
    const problem = problemOf(input, pristine)
    if (!problem) return
    if (problem.startsWith('stray')) figures.stray++
    else if (problem.startsWith('incoherent')) figures.incoherent++
    else figures.translatedWrong++
    if (figures.examples.length < 5) figures.examples.push(problem.slice(0, 600))
    // One saved input per kind of problem and run, shrunk to the payloads that still show it.
    const kind = signature(problem)
    if (!save || seen.has(kind)) return
    seen.add(kind)
    const payloads = await shrink(input.payloads, (list) => list.length, (list, from, to) => [...list.slice(0, from), ...list.slice(to)],
      async (list) => { const again = problemOf({ ...input, payloads: list }, pristine); return again !== undefined && signature(again) === kind })
    figures.saved.push(saveInput('translator', kind.split(':')[0]!, serialize({ ...input, payloads }), '.json'))
  }
  for (const { bytes } of savedInputs('translator')) {
    await check(deserialize(bytes.toString('utf8')), false, false)
    figures.replayed++
  }
  const r = rng(seed)
  for (let i = 0; i < count; i++) {
    const { input, pristine } = generate(r)
    await check(input, pristine, true)
  }
  return figures
}

/** A problem without its details (numbers, quoted values): what makes two findings the same finding. */
const signature = (problem: string) => problem.split('\n')[0]!.replace(/\d+/g, 'N').replace(/"[^"]*"/g, 'S').slice(0, 120)

/** What is wrong with the translation of `input`, or undefined. */
function problemOf(input: Input, pristine: boolean): string | undefined {
  const { chunks, error } = translate(input)
  if (error !== undefined && !(isReinError(error) && typeof error.code === 'string' && error.code !== '')) {
    return `stray: ${error instanceof Error ? error.stack : JSON.stringify(error)}`
  }
  const problems = contractProblems(chunks, error === undefined)
  if (problems.length > 0) return `incoherent: ${problems.slice(0, 3).join('; ')}`
  if (!pristine) return undefined
  if (error !== undefined) return `lost: an undamaged answer failed: ${String(error)}`
  const lost = lostContent(input, chunks)
  return lost === undefined ? undefined : `lost: ${lost}`
}
