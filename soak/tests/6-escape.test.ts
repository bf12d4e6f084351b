/**
 * Suite 6, the escape corpus: every known way out of the workspace for tool-fs paths and bash
 * `workdir` (soak/corpus/escape/cases.json: the cases of tool-fs's containment test and tool-bash's
 * workdir test, extended with encodings, mixed separators, newlines, long paths, `..` after links,
 * hard links and links swapped in by another process during the call), then seeded random
 * compositions of path fragments, all run against the real tools through `ctx.tools.execute` in a
 * workspace surrounded by a sentinel tree. Counted: reads that returned outside content, writes
 * that changed anything outside.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { broken, publish, type Figure } from '../src/figures.ts'
import { limit, rng, seedOf, size } from '../src/plan.ts'
import { randomCase } from '../src/escape/compose.ts'
import { loadCorpus, type EscapeCase } from '../src/escape/corpus.ts'
import { bootProber, type Outcome, type Prober } from '../src/escape/probe.ts'
import { changed, fingerprintOutside, plantGround, startFlipper } from '../src/escape/sentinel.ts'

const SEED = seedOf(6006)
const RANDOM = size('escape-random', 200, 5000)
/** Random calls per ground: a fresh workspace now and then, so earlier writes do not pile up. */
const PER_GROUND = 250

const tally = {
  calls: 0,
  corpusCases: 0,
  randomCases: 0,
  readsOutside: [] as string[],
  writesOutside: [] as string[],
  threw: [] as string[],
  controlsFailed: [] as string[],
  unexpected: [] as string[],
  hardLinkReads: 0,
  codes: new Map<string, number>(),
  /** Race calls answered, and refused (they met a link or a gap): both above 0 shows the race was met. */
  raceAnswered: 0,
  raceRefused: 0,
}

const cleanups: (() => unknown)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function ground(seed: number) {
  const made = plantGround(seed)
  cleanups.push(() => made.remove())
  const prober = await bootProber(made)
  cleanups.push(() => prober.dispose())
  return { ground: made, prober }
}

/** Counts one call's outcome; `outsideChanged` lists what differs in the sentinel tree after it. */
function judge(escape: EscapeCase, outcome: Outcome, outsideChanged: string[], seed: number): void {
  tally.calls++
  tally.codes.set(outcome.code, (tally.codes.get(outcome.code) ?? 0) + 1)
  const where = `${escape.label} [${escape.from}, seed ${seed}] → ${outcome.code}`
  // One count per call, whatever number of signs it left.
  if (outcome.readOutside.length > 0) tally.readsOutside.push(`${where}: ${outcome.readOutside.join('; ')}`)
  const wrote = [...outcome.wroteOutside, ...(outsideChanged.length > 0 ? [`changed outside: ${outsideChanged.join(', ')}`] : [])]
  if (wrote.length > 0) tally.writesOutside.push(`${where}: ${wrote.join('; ')}`)
  if (outcome.code === 'THREW') tally.threw.push(`${where}: ${outcome.text}`)
  if (outcome.hardRead) tally.hardLinkReads++
  if (escape.control && outcome.code !== 'ok') tally.controlsFailed.push(`${where}: ${outcome.text.slice(0, 300)}`)
  const expected = escape.expect === 'any' || outcome.code === escape.expect || (escape.expect === 'error' && outcome.code !== 'ok')
  if (!expected) tally.unexpected.push(`${where} (the corpus says ${escape.expect}): ${outcome.text.slice(0, 200)}`)
}

/** Runs `escape` (`repeat` times; a race case with the flipper running) and judges each call. */
async function runCase(prober: Prober, made: ReturnType<typeof plantGround>, escape: EscapeCase, seed: number): Promise<void> {
  if (!escape.race) {
    for (let time = 0; time < (escape.repeat ?? 1); time++) {
      const before = fingerprintOutside(made)
      const outcome = await prober.probe(escape)
      judge(escape, outcome, changed(before, fingerprintOutside(made)), seed)
    }
    return
  }
  // The flipper rewrites flip/ and flipfile in the workspace: a write's content may vanish with
  // them, so the answers' content and the sentinel tree's hashes (taken with the flipper stopped) judge.
  const before = fingerprintOutside(made)
  const flipper = await startFlipper(made)
  const outcomes: Outcome[] = []
  try {
    for (let time = 0; time < (escape.repeat ?? 1); time++) outcomes.push(await prober.probe(escape, { racing: true }))
  } finally {
    await flipper.stop()
  }
  const after = changed(before, fingerprintOutside(made))
  outcomes.forEach((outcome, index) => judge(escape, outcome, index === 0 ? after : [], seed))
  for (const outcome of outcomes) {
    if (outcome.code === 'ok') tally.raceAnswered++
    else tally.raceRefused++
  }
}

function figures(): Figure[] {
  return [
    { label: 'corpus cases', value: tally.corpusCases },
    { label: 'random compositions', value: tally.randomCases },
    { label: 'calls made (race cases run many times)', value: tally.calls },
    { label: 'race calls that met the folder or file and answered', value: tally.raceAnswered, atLeast: 1 },
    { label: 'race calls that met a link or a gap and were refused', value: tally.raceRefused, atLeast: 1 },
    { label: 'reads that returned outside content (marker, /etc/passwd, a listed path or a command run outside)', value: tally.readsOutside.length, must: 0 },
    { label: 'writes outside (the sentinel tree changed, or a write\'s content landed outside the workspace)', value: tally.writesOutside.length, must: 0 },
    { label: 'calls that threw instead of answering', value: tally.threw.length, must: 0 },
    { label: 'control calls inside the workspace that failed', value: tally.controlsFailed.length, must: 0 },
    { label: 'corpus cases answered otherwise than the corpus records (not an escape)', value: tally.unexpected.length },
    { label: 'reads of a hard link to an outside file, by its name inside (the same file: allowed)', value: tally.hardLinkReads },
  ]
}

/** Everything found so far that breaks a figure's `must`. */
function findings(): string[] {
  return [...tally.readsOutside, ...tally.writesOutside, ...tally.threw, ...tally.controlsFailed]
}

function found(): string {
  return findings().slice(0, 40).join('\n')
}

describe('6-escape: the escape corpus and random paths', () => {
  it('the corpus: no read or write outside the workspace', async () => {
    const { ground: made, prober } = await ground(SEED)
    const cases = loadCorpus()
    for (const escape of cases) {
      await runCase(prober, made, escape, SEED)
      tally.corpusCases++
    }
    expect(tally.corpusCases).toBeGreaterThanOrEqual(100)
    expect(broken(figures()), `seed ${SEED}\n${found()}`).toEqual([])
  }, limit(60_000))

  it(`${RANDOM} random compositions of path fragments: no read or write outside the workspace`, async () => {
    const random = rng(SEED)
    // This test answers for its own calls; the corpus test for the corpus's.
    const earlier = new Set(findings())
    let current: Awaited<ReturnType<typeof ground>> | undefined
    for (let n = 0; n < RANDOM; n++) {
      if (n % PER_GROUND === 0) {
        for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
        current = await ground(SEED + n)
      }
      await runCase(current!.prober, current!.ground, randomCase(random, n), SEED)
      tally.randomCases++
    }
    expect(findings().filter((finding) => !earlier.has(finding)), `seed ${SEED}`).toEqual([])
  }, limit(60_000))
})

afterAll(() => {
  if (process.env.REIN_SOAK_DEBUG) console.log(JSON.stringify({ figures: figures(), found: found(), unexpected: tally.unexpected, codes: [...tally.codes] }, null, 2))
  publish({
    id: '6-escape',
    title: 'Escape corpus',
    ran: `${tally.corpusCases} corpus cases (soak/corpus/escape/cases.json; each race case 30 times, bash's 60, while another process swaps links in) and ${tally.randomCases} seeded random path compositions, `
      + 'against tool-fs read/write/edit/multi_edit/glob/grep and bash workdir through ctx.tools.execute, in a workspace surrounded by a marked sentinel tree',
    seed: SEED,
    figures: figures(),
    promise: 'No path given to the file tools or to bash\'s workdir — through `..`, links (even ones swapped in during the call), absolute or /proc paths, look-alike characters, encodings or odd separators — '
      + 'reads or changes anything outside the workspace. A hard link placed inside the workspace is the workspace\'s own file: it can be read, and writing it replaces the link rather than the file outside.',
  })
})
