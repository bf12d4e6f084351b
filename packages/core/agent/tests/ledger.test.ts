// The file ledger a summary ends with: built from the log's tool calls, never by the model.
import type { SessionEvent } from '@rein/session'
import { describe, expect, it } from 'vitest'
import { fileLedger, recallNote, withoutLedger } from '../src/compaction/ledger.ts'

const effects: Record<string, string[]> = { read: ['read'], write: ['write'], bash: ['exec'], lookup: [] }
let seq = 0
const call = (callId: string, name: string, args: object): SessionEvent => ({ seq: seq++, time: '', type: 'tool/call', data: { callId, name, arguments: JSON.stringify(args), replaySafe: false } } as SessionEvent)
const result = (callId: string, code?: string): SessionEvent => ({ seq: seq++, time: '', type: 'tool/result', data: { callId, content: [], isError: code !== undefined, ...(code ? { code } : {}) } } as SessionEvent)

describe('the file ledger', () => {
  it('lists what was read, written and run, from the arguments and the tools\' effects, and leaves out calls that never ran', () => {
    const events = [
      call('a', 'read', { path: 'src/a.ts' }), result('a'),
      call('b', 'write', { file_path: 'src/b.ts' }), result('b'),
      call('c', 'bash', { command: 'npm   test\n--silent', workdir: 'pkg' }), result('c'),
      call('d', 'write', { path: 'secret.txt' }), result('d', 'DENIED'),
      call('e', 'lookup', { word: 'x' }), result('e'),
      call('f', 'read', { paths: ['x.ts', 'y.ts'] }), result('f'),
    ]
    expect(fileLedger(events, seq, (name) => effects[name], 4_000)).toBe([
      '## Files (from the session log)',
      '- read: src/a.ts, x.ts, y.ts',
      '- written: src/b.ts',
      '- run: `npm test --silent` (in pkg)',
    ].join('\n'))
  })

  it('lists fewer, the most recent, when there are too many to fit its size', () => {
    const events = Array.from({ length: 500 }, (_, n) => call(`r${n}`, 'read', { path: `src/file-${n}.ts` }))
    const ledger = fileLedger(events, seq, (name) => effects[name], 200)
    expect(ledger.length).toBeLessThanOrEqual(200)
    expect(ledger).toContain('495 earlier and src/file-495.ts')
    expect(ledger).toMatch(/src\/file-499\.ts$/)
  })

  it('stays within its size when the model sent a path no system takes (longer than PATH_MAX): the summary is not made longer than what it replaces', () => {
    const events = [call('a', 'read', { path: 'a'.repeat(600_000) }), result('a', 'INVALID_PATH'), call('b', 'read', { path: 'src/b.ts' }), result('b'), call('c', 'bash', { command: 'ls', workdir: 'w'.repeat(10_000) }), result('c')]
    const ledger = fileLedger(events, seq, (name) => effects[name], 400)
    expect(ledger.length).toBeLessThanOrEqual(400)
    expect(ledger).toContain('src/b.ts')
    expect(ledger).not.toContain('a'.repeat(5_000))
  })

  it('says none when no call touched a file', () => {
    expect(fileLedger([call('e', 'lookup', { word: 'x' })], seq, (name) => effects[name], 400)).toBe('## Files (from the session log)\n- none')
  })
})

describe('a copy of the ledger in a summary', () => {
  const ledger = '## Files (from the session log)\n- read: a.ts\n- run: `npm test`'

  it('is dropped with its list only: the model\'s sections before and after it stay', () => {
    expect(withoutLedger(`${ledger}\n\n## Goal\nX\n## Decisions\nY`)).toBe('## Goal\nX\n## Decisions\nY')
    expect(withoutLedger(`## Goal\nX\n\n${ledger}\n\n## Open tasks\nZ`)).toBe('## Goal\nX\n\n## Open tasks\nZ')
    expect(withoutLedger(`## Goal\nX\n\n${ledger}`)).toBe('## Goal\nX')
  })

  it('leaves nothing when the summary was only a copied ledger', () => {
    expect(withoutLedger(ledger)).toBe('')
  })
})

describe('the recall note after the ledger', () => {
  const ran = (callId: string, name: string, chars: number): SessionEvent[] => [
    call(callId, name, {}),
    { seq: seq++, time: '', type: 'tool/result', data: { callId, content: [{ type: 'text', text: 'x'.repeat(chars) }], isError: false } } as SessionEvent,
  ]

  it('names the results up to the range\'s end by call id, the latest first, leaving out calls that never ran', () => {
    const events = [...ran('c1', 'read', 10), call('c2', 'write', {}), result('c2', 'DENIED'), ...ran('c3', 'bash', 2_000), ...ran('c4', 'read', 5)]
    expect(recallNote(events, events.at(-3)!.seq, 1_000)).toBe('(Tool results summarized here are not shown again; recall_result shows one by its call id, the latest first: c3 (bash, 2,000 characters), c1 (read, 10 characters).)')
  })

  it('names fewer, the latest, to stay within its size, counting the rest; none when even two do not fit', () => {
    const events = Array.from({ length: 60 }, (_, n) => ran(`call_${n}`, 'read', 100)).flat()
    const note = recallNote(events, events.at(-1)!.seq, 700)
    expect(note.length).toBeLessThanOrEqual(700)
    expect(note).toContain('the latest first: call_59 (read, 100 characters), ')
    expect(note).toMatch(/, and 50 earlier\.\)$/)
    expect(recallNote(events, events.at(-1)!.seq, 0)).toBe('(Tool results summarized here are not shown again; recall_result shows one by its call id.)')
  })
})
