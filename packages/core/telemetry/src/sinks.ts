/**
 * The registered sinks: records go to each in turn, and whatever a sink does wrong (throws, rejects,
 * never settles its flush) is logged once per sink and kind and goes no further.
 */

import type { Logger } from '@deepseek-ai/cordis'
import type { TelemetryRecord, TelemetrySink } from './types.ts'

/** What a sink did wrong; each is logged once per sink. */
type FailureKind = 'emit threw' | 'emit rejected' | 'flush failed' | 'flush timed out'

interface SinkEntry {
  readonly sink: TelemetrySink
  readonly failed: Set<FailureKind>
}

export class SinkSet {
  // Replaced, never changed in place: a sink that removes itself during emit cannot make another miss a record.
  private entries: readonly SinkEntry[] = []

  constructor(private readonly logger: Logger) {}

  get size(): number {
    return this.entries.length
  }

  has(sink: TelemetrySink): boolean {
    return this.entries.some((entry) => entry.sink === sink)
  }

  add(sink: TelemetrySink): void {
    this.entries = [...this.entries, { sink, failed: new Set() }]
  }

  remove(sink: TelemetrySink): void {
    this.entries = this.entries.filter((entry) => entry.sink !== sink)
  }

  clear(): void {
    this.entries = []
  }

  /** Hands `record` to every sink; returns at once whatever they do. */
  emit(record: TelemetryRecord): void {
    for (const entry of this.entries) {
      try {
        // A sink may be async despite the type: its promise is watched, never awaited.
        const returned: unknown = entry.sink.emit(record)
        if (isThenable(returned)) returned.then(undefined, (error: unknown) => this.fail(entry, 'emit rejected', error))
      } catch (error) {
        this.fail(entry, 'emit threw', error)
      }
    }
  }

  /** Every sink's `flush`, each given at most `timeoutMs`; never rejects. */
  async flush(timeoutMs: number): Promise<void> {
    await Promise.all(this.entries.map((entry) => this.flushOne(entry, timeoutMs)))
  }

  private async flushOne(entry: SinkEntry, timeoutMs: number): Promise<void> {
    const { sink } = entry
    if (typeof sink.flush !== 'function') return
    let timer: NodeJS.Timeout | undefined
    // Kept referenced: a flush whose promise holds nothing open would otherwise let the process end
    // mid-await, and the caller's code after it never run. A dead exporter holds the process for
    // `timeoutMs` at most, as the Config says.
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs)
    })
    try {
      const outcome = await Promise.race([Promise.resolve().then(() => sink.flush!()), deadline])
      if (outcome === 'timeout') this.fail(entry, 'flush timed out', `no answer within ${timeoutMs} ms`)
    } catch (error) {
      this.fail(entry, 'flush failed', error)
    } finally {
      clearTimeout(timer)
    }
  }

  private fail(entry: SinkEntry, kind: FailureKind, error: unknown): void {
    if (entry.failed.has(kind)) return
    entry.failed.add(kind)
    this.logger.error('telemetry sink %s: %s (logged once): %s', entry.sink.name, kind, error)
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
}
