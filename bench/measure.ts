/** A small timing harness: warm up, then take the median of several rounds. */

export interface Measurement {
  name: string
  /** Median nanoseconds per operation across rounds. */
  nsPerOp: number
}

/**
 * `operation` runs `iterations` times per round; the figure is nanoseconds per unit of work, where
 * one call does `units` units (e.g. the events of a stream), taken as the median over `rounds`.
 */
export async function measure(
  name: string,
  operation: () => unknown,
  { iterations = 20_000, rounds = 7, units = 1, warmup = iterations }: { iterations?: number; rounds?: number; units?: number; warmup?: number } = {},
): Promise<Measurement> {
  for (let i = 0; i < warmup; i++) await operation()
  const samples: number[] = []
  for (let round = 0; round < rounds; round++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < iterations; i++) await operation()
    samples.push(Number(process.hrtime.bigint() - start) / (iterations * units))
  }
  return { name, nsPerOp: median(samples) }
}

function median(values: number[]): number {
  return values.sort((x, y) => x - y)[Math.floor(values.length / 2)]!
}

/**
 * Two operations timed in alternating rounds (a, b, a, b, …), one call each per round, after
 * `warmup` calls of each: a drift of the machine during the run falls on both alike. Medians over
 * `rounds`.
 */
export async function measurePair(
  a: { name: string; operation: () => unknown },
  b: { name: string; operation: () => unknown },
  { rounds = 15, warmup = 2 }: { rounds?: number; warmup?: number } = {},
): Promise<[Measurement, Measurement]> {
  for (let i = 0; i < warmup; i++) {
    await a.operation()
    await b.operation()
  }
  const samples: [number[], number[]] = [[], []]
  const time = async (operation: () => unknown) => {
    const start = process.hrtime.bigint()
    await operation()
    return Number(process.hrtime.bigint() - start)
  }
  for (let round = 0; round < rounds; round++) {
    samples[0].push(await time(a.operation))
    samples[1].push(await time(b.operation))
  }
  return [{ name: a.name, nsPerOp: median(samples[0]) }, { name: b.name, nsPerOp: median(samples[1]) }]
}

export function report(title: string, baseline: Measurement, others: Measurement[]) {
  console.log(`\n${title}`)
  for (const entry of [baseline, ...others]) {
    const ratio = entry === baseline ? '1.0x' : `${(entry.nsPerOp / baseline.nsPerOp).toFixed(1)}x`
    console.log(`  ${entry.name.padEnd(44)} ${(entry.nsPerOp / 1000).toFixed(3).padStart(9)} µs/op  ${ratio.padStart(8)}`)
  }
}
