// How two pipes become the one text the model reads, and how a long one reaches the spill file:
// order, stderr marks, split characters, backpressure, and every way saving it can fail.
import { mkdtempSync, readFileSync, rmSync, createWriteStream } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { excerpt, type OpenSpill } from '@rein/tools'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { OutputCollector } from '../src/output-collector.ts'

const LIMITS = { chars: 1000, lines: 40 }
let dir: string

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rein-collect-'))
})
afterEach(() => rmSync(dir, { recursive: true, force: true }))

const bytes = (text: string) => new TextEncoder().encode(text)

/** A spill opener into `dir` that records what it opened. */
function fileSpill(opened: string[] = []): OpenSpill {
  return async (label) => {
    const path = join(dir, `${label}-${opened.length + 1}.txt`)
    opened.push(path)
    return { path, stream: createWriteStream(path) }
  }
}

async function collect(parts: [string | Uint8Array, 'stdout' | 'stderr'][], spill?: OpenSpill) {
  const collector = new OutputCollector(LIMITS, spill)
  for (const [chunk, stream] of parts) await collector.write(typeof chunk === 'string' ? bytes(chunk) : chunk, stream)
  return collector.finish()
}

describe('OutputCollector', () => {
  it('keeps 40 lines that end in a newline whole at a 40-line limit (the final newline is no 41st line)', async () => {
    const lines = Array.from({ length: LIMITS.lines }, (_, i) => `${i + 1}\n`).join('')
    expect(await collect([[lines, 'stdout']], fileSpill())).toEqual({ kind: 'whole', text: lines })
  })

  it('keeps the order chunks arrived in and marks every stderr line', async () => {
    const out = await collect([['a\n', 'stdout'], ['e1\ne2\n', 'stderr'], ['b\n', 'stdout'], ['e3', 'stderr']])
    expect(out).toEqual({ kind: 'whole', text: 'a\n[stderr] e1\n[stderr] e2\nb\n[stderr] e3' })
  })

  it('ends a line cut off by the other pipe where it was cut, so no line mixes the two', async () => {
    const out = await collect([['Password: ', 'stdout'], ['warning\n', 'stderr'], ['done\n', 'stdout']])
    expect(out).toEqual({ kind: 'whole', text: 'Password: \n[stderr] warning\ndone\n' })
  })

  it('continues a line across chunks of the same pipe without a break or a second mark', async () => {
    const out = await collect([['par', 'stderr'], ['tial\nnext', 'stderr'], ['\n', 'stderr']])
    expect(out).toEqual({ kind: 'whole', text: '[stderr] partial\n[stderr] next\n' })
  })

  it('decodes a UTF-8 character split between two chunks', async () => {
    const euro = bytes('price: €5\n')
    const at = 'price: '.length + 1
    const out = await collect([[euro.subarray(0, at), 'stdout'], [euro.subarray(at), 'stdout']])
    expect(out).toEqual({ kind: 'whole', text: 'price: €5\n' })
  })

  it('strips an escape sequence split between two chunks, with a UTF-8 character split beside it', async () => {
    const all = bytes('\u001b[38;5;208m€\u001b[0m ok\n')
    // Inside the sequence, then inside the euro sign.
    const out = await collect([[all.subarray(0, 4), 'stdout'], [all.subarray(4, 12), 'stdout'], [all.subarray(12), 'stdout']])
    expect(out).toEqual({ kind: 'whole', text: '€ ok\n' })
  })

  it('reads a CRLF split between two chunks as one line break', async () => {
    const out = await collect([['a\r', 'stdout'], ['\nb\r', 'stdout'], ['\nc\r', 'stdout']])
    expect(out).toEqual({ kind: 'whole', text: 'a\nb\nc' })
  })

  it('shows an escape sequence cut off by the end of the output as a mark and its text', async () => {
    const out = await collect([['done \u001b[3', 'stdout']])
    expect(out).toEqual({ kind: 'whole', text: 'done \u241b[3' })
  })

  it('opens no spill file while the output is short', async () => {
    const opened: string[] = []
    await collect([['short\n', 'stdout']], fileSpill(opened))
    expect(opened).toEqual([])
  })

  it('writes all of a long output to the spill file and previews it as excerpt would', async () => {
    const lines = Array.from({ length: 500 }, (_, i) => `line ${i}`)
    const whole = `${lines.join('\n')}\n`
    const out = await collect(lines.map((line) => [`${line}\n`, 'stdout'] as [string, 'stdout']), fileSpill())
    if (out.kind !== 'excerpt' || !('path' in out.saved)) throw new Error(`expected a saved excerpt, got ${JSON.stringify(out)}`)
    expect(readFileSync(out.saved.path, 'utf8')).toBe(whole)
    expect(out.excerpt).toEqual(excerpt(whole, LIMITS))
  })

  it('writes every chunk in order even when the producer does not wait for the file to open', async () => {
    const collector = new OutputCollector(LIMITS, fileSpill())
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i}\n`)
    const pending = lines.map((line) => collector.write(bytes(line), 'stdout'))
    await Promise.all(pending.filter((returned) => returned !== undefined))
    const out = await collector.finish()
    if (out.kind !== 'excerpt' || !('path' in out.saved)) throw new Error(`expected a saved excerpt, got ${JSON.stringify(out)}`)
    expect(readFileSync(out.saved.path, 'utf8')).toBe(lines.join(''))
  })

  it('asks the producer to wait while the spill file is full, and loses nothing', async () => {
    const written: string[] = []
    let waits = 0
    const slow = new Writable({
      highWaterMark: 16,
      write(chunk: Buffer, _encoding, done) {
        written.push(chunk.toString())
        setImmediate(done)
      },
    })
    const collector = new OutputCollector(LIMITS, async () => ({ path: join(dir, 'slow.txt'), stream: slow }))
    const chunk = `${'z'.repeat(99)}\n`
    for (let i = 0; i < 200; i++) {
      const returned = collector.write(bytes(chunk), 'stdout')
      if (returned) {
        waits++
        await returned
      }
    }
    await collector.finish()
    expect(waits).toBeGreaterThan(100)
    expect(written.join('')).toBe(chunk.repeat(200))
  })

  it('stops the file at its byte cap without cutting a character in two, and counts every byte left out', async () => {
    const line = `${'é'.repeat(49)}\n` // 99 bytes, 50 characters
    const whole = line.repeat(100)
    const collector = new OutputCollector(LIMITS, fileSpill(), 1025)
    for (let i = 0; i < 100; i++) await collector.write(bytes(line), 'stdout')
    const out = await collector.finish()
    if (out.kind !== 'excerpt' || !('path' in out.saved)) throw new Error(`expected a saved excerpt, got ${JSON.stringify(out)}`)
    // 1025 bytes would end in the middle of an é: the file stops one byte short.
    const kept = Buffer.from(whole).subarray(0, 1024).toString('utf8')
    expect(out.unsavedBytes).toBe(Buffer.byteLength(whole) - 1024)
    expect(readFileSync(out.saved.path, 'utf8')).toBe(`${kept}\n[output file capped at 1,025 bytes; ${out.unsavedBytes.toLocaleString('en-US')} more bytes were not saved]\n`)
    expect(kept).not.toContain('\uFFFD')
    // The preview is still made from all of it: its tail is the output's real end.
    expect(out.excerpt).toEqual(excerpt(whole, LIMITS))
  })

  it('says the output could not be saved when the call has no spill folder', async () => {
    const out = await collect([['x'.repeat(5000), 'stdout']])
    expect(out).toMatchObject({ kind: 'excerpt', saved: { error: 'no spill folder: the call ran outside a session' } })
  })

  it('says the output could not be saved when the spill file cannot be opened', async () => {
    const out = await collect([['x'.repeat(5000), 'stdout']], () => Promise.reject(new Error('EACCES: permission denied')))
    expect(out).toMatchObject({ kind: 'excerpt', saved: { error: 'the spill file could not be opened: EACCES: permission denied' } })
  })

  it('says the output could not be saved when the disk fills up midway, and keeps the preview', async () => {
    let taken = 0
    const full = new Writable({
      write(chunk: Buffer, _encoding, done) {
        taken += chunk.length
        done(taken > 3000 ? Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }) : undefined)
      },
    })
    const parts = Array.from({ length: 100 }, (_, i) => [`row ${i}\n`, 'stdout'] as [string, 'stdout'])
    const collector = new OutputCollector(LIMITS, async () => ({ path: '/spill/full.txt', stream: full }))
    for (let i = 0; i < 10; i++) for (const [chunk, stream] of parts) await collector.write(bytes(chunk), stream)
    const out = await collector.finish()
    expect(out).toMatchObject({
      kind: 'excerpt',
      saved: { error: 'writing /spill/full.txt failed: ENOSPC: no space left on device, write' },
      excerpt: { head: expect.stringMatching(/^row 0\nrow 1\n/), totalLines: 1000 },
    })
  })
})
