// Suite 3 (issue #17): seeded fuzzing of the four places rein reads what it does not control —
// provider streams (over real sockets, both adapters), the chunk translator, the model's tool
// arguments, and session logs on disk. Anything found is shrunk and saved under soak/corpus/ and
// replayed on every run. REIN_SOAK_SEED replays a run; REIN_SOAK_FUZZ / _FUZZ_SSE / _FUZZ_LOGS size it.
import { describe, expect, it } from 'vitest'
import { broken, publish, type Figure } from '../src/figures.ts'
import { fuzzLogs, type LogFigures } from '../src/fuzz/log-fuzz.ts'
import { fuzzSse, type SseFigures } from '../src/fuzz/sse-fuzz.ts'
import { fuzzToolArgs, type ToolArgsFigures } from '../src/fuzz/tool-args-fuzz.ts'
import { fuzzTranslator, type TranslatorFigures } from '../src/fuzz/translator-fuzz.ts'
import { FULL, limit, seedOf, size } from '../src/plan.ts'

const SEED = seedOf(3_017)
/** Socket fuzzing is the slow part (~100-350 streams/s on a 2-core machine: several minutes at full size). */
const STREAMS = size('fuzz-sse', 2_000, 100_000)
const LOGS = size('fuzz-logs', 2_000, 100_000)
const OTHERS = size('fuzz', 2_000, 100_000)
/** Every Nth loaded log (and every one cut short) is also resumed for real (open, repair, fsync, close) and read back. */
const RESUME_EVERY = FULL ? 16 : 8

const seen: { sse?: SseFigures; translator?: TranslatorFigures; tools?: ToolArgsFigures; logs?: LogFigures } = {}
/** What a failing target shows: its figures (examples of what escaped included) and how to replay the run. */
const context = (figures: unknown) => ({ seed: SEED, replay: `REIN_SOAK_SEED=${SEED}`, figures })
const pct = (part: number, whole: number) => `${whole === 0 ? 0 : Math.round((100 * part) / whole)}%`

describe('3 fuzz: streams, translator, tool arguments and session logs never crash rein or load wrong', () => {
  it('SSE byte streams into both adapters over a real socket end in a finish or a typed failure', async () => {
    const sse = seen.sse = await fuzzSse(SEED, STREAMS)
    expect({ wrong: sse.stray + sse.hangs + sse.unfinished, ...context(sse) }).toMatchObject({ wrong: 0 })
  }, limit(120_000))

  it('random and damaged payloads into the chunk translator give ReinErrors or coherent chunks', async () => {
    const translator = seen.translator = await fuzzTranslator(SEED, OTHERS)
    expect({ wrong: translator.stray + translator.incoherent + translator.translatedWrong, ...context(translator) }).toMatchObject({ wrong: 0 })
  }, limit(60_000))

  it('random argument strings into ctx.tools.execute always give a result, and bodies only valid arguments', async () => {
    const tools = seen.tools = await fuzzToolArgs(SEED, OTHERS)
    expect({ wrong: tools.stray + tools.invalidReachedBody + tools.polluted, ...context(tools) }).toMatchObject({ wrong: 0 })
  }, limit(60_000))

  it('damaged session logs either load faithfully (and repair to a valid log) or are refused with a ReinError', async () => {
    const logs = seen.logs = await fuzzLogs(SEED, LOGS, RESUME_EVERY)
    expect({ wrong: logs.stray + logs.loadedWrong + logs.tornRefused + logs.refusedChanged + logs.resumeRefused, ...context(logs) }).toMatchObject({ wrong: 0 })
  }, limit(120_000))

  it('publishes its figures, every one that must hold holding', () => {
  const { sse, translator, tools, logs } = seen
  if (!sse || !translator || !tools || !logs) throw new Error('a target did not finish; see the failures above')
  const figures: Figure[] = [
    { label: 'SSE byte streams fuzzed over a real socket (llm-openai and llm-deepseek, one in eight through LlmRuntime)', value: sse.streams },
    { label: 'chunk translator payload sequences fuzzed', value: translator.sequences },
    { label: 'tool argument strings fuzzed into ctx.tools.execute', value: tools.calls },
    { label: 'damaged session logs generated (every one cut short, and every ' + RESUME_EVERY + 'th other one that loads, also resumed)', value: logs.logs },
    { label: 'non-ReinError throws, all targets', value: sse.stray + translator.stray + tools.stray + logs.stray, must: 0 },
    { label: 'streams without a finish or a typed failure (hangs included)', value: sse.hangs + sse.unfinished, must: 0 },
    { label: 'translator chunk sequences that break the stream contract, or lose text of an undamaged answer', value: translator.incoherent + translator.translatedWrong, must: 0 },
    { label: 'tool bodies given arguments their schema refuses', value: tools.invalidReachedBody, must: 0 },
    { label: 'Object.prototype changes from prototype keys in arguments', value: tools.polluted, must: 0 },
    { label: 'logs loaded wrong (not what the file says, a complete event before the damage lost, or invalid after repair)', value: logs.loadedWrong, must: 0 },
    { label: 'logs cut after their header (a torn write) that were refused', value: logs.tornRefused, must: 0 },
    { label: 'refused logs a resume changed', value: logs.refusedChanged, must: 0 },
    { label: 'damaged logs refused with a ReinError', value: Object.values(logs.refused).reduce((a, b) => a + b, 0) },
    { label: 'damaged logs resumed, repaired and valid', value: logs.resumedAndValid },
    { label: 'logs whose events were all undamaged whose resume was refused', value: logs.resumeRefused, must: 0 },
    { label: 'logs loaded with a changed line that still reads as a well-formed event (no checksum can tell)', value: logs.changedButWellFormed },
    { label: 'saved inputs replayed (soak/corpus)', value: sse.replayed + translator.replayed + tools.replayed + logs.replayed },
    { label: 'new inputs saved this run', value: sse.saved.length + translator.saved.length + tools.saved.length + logs.saved.length, must: 0 },
  ]
  const secs = Math.max(1, sse.ms / 1000)
  publish({
    id: '3-fuzz',
    title: 'Fuzz: provider streams, chunk translator, tool arguments, session logs',
    ran: `${sse.streams} generated SSE streams (${pct(sse.damage.none ?? 0, sse.streams)} undamaged; the rest cut, duplicated, swapped, flipped, split inside UTF-8, invalid or wrong-shaped JSON, 1 MB and >8 MB lines, odd statuses and content types, dropped or silent connections) from one loopback server at ${Math.round(sse.streams / secs)} streams/s; `
      + `${translator.sequences} payload sequences (${translator.payloads} payloads) into createChunkTranslator; ${tools.calls} argument strings into ctx.tools.execute for three schema'd tools; `
      + `${logs.logs} logs from real agent runs, truncated, byte-damaged or with lines dropped, duplicated or reordered, loaded through ctx.sessions; every one cut short, and every ${RESUME_EVERY}th other one that loads, resumed by ctx.agents.resume; plus every saved input in soak/corpus.`,
    seed: SEED,
    figures,
    promise: 'Whatever bytes a provider sends, a stream ends with a finish or a typed error, never a crash or a hang; whatever arguments a model writes, a tool call ends with a result and a tool body only sees arguments its schema accepts. A session log damaged on disk is either refused with a clear error or loaded exactly as its lines say, keeping every event written before the damage; a log cut short by a crash always loads and repairs to a valid log.',
  })
  expect(broken(figures), `seed ${SEED}`).toEqual([])
  })
})
