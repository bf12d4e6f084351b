// TerminalText fed chunk by chunk: what is held across a cut (a line being redrawn, a letter and
// the backspace that may strike it over) and what is given out at once.
import { describe, expect, it } from 'vitest'
import { TerminalText } from '../src/terminal-text.ts'

/** The text for `chunks` fed one by one, then the end. */
function read(...chunks: (string | Buffer)[]): string {
  const terminal = new TerminalText()
  let out = ''
  for (const chunk of chunks) out += terminal.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  return out + terminal.end()
}

describe('TerminalText', () => {
  it('keeps the last state of a redrawn line whose states are cut between chunks', () => {
    expect(read('\r1', '0%', '\r2', '0%\r', '30', '%', '\n')).toBe('30%\n')
  })

  it('keeps a progress bar redrawn 1000 times, one write each, as one line', () => {
    const writes = Array.from({ length: 1000 }, (_, i) => `\r${i + 1}/1000`)
    expect(read(...writes, '\ndone\n')).toBe('1000/1000\ndone\n')
  })

  it('keeps a line whose CR is followed by its line break (CRLF cut between chunks, or CRs before it)', () => {
    expect(read('50%\r', '\n', 'a\r\r', '\r\n')).toBe('50%\na\n')
  })

  it('keeps the last state of a line the output ends on, CR and all', () => {
    expect(read('1%\r2%\r')).toBe('2%')
  })

  it('ends a line already given out before its redrawn state, since it cannot be taken back', () => {
    const terminal = new TerminalText()
    expect(terminal.write(Buffer.from('Downloading '))).toBe('Downloading ')
    expect(terminal.write(Buffer.from('file\r'))).toBe('')
    expect(terminal.write(Buffer.from('100%'))).toBe('\n')
    expect(terminal.write(Buffer.from('\n'))).toBe('100%\n')
    expect(read('Downloading ', 'file\r', '\n')).toBe('Downloading file\n')
  })

  it('gives out text that follows no CR at once (a prompt waits for no line break)', () => {
    const terminal = new TerminalText()
    expect(terminal.write(Buffer.from('line\nPassword: '))).toBe('line\nPassword: ')
  })

  it('shows a redrawn line past its size limit as it stands instead of holding all of it', () => {
    const terminal = new TerminalText()
    const long = 'x'.repeat(70_000)
    expect(terminal.write(Buffer.from(`\r${long}`))).toBe(long)
    expect(terminal.write(Buffer.from('\rdone\n'))).toBe('\ndone\n')
  })

  it('strikes a letter over the one after a cut (N, backspace | N)', () => {
    expect(read('N\b', 'NA\bA', 'M\bME\b', 'E\n')).toBe('NAME\n')
  })

  it('reads bold underlined overstrike as its letters', () => {
    expect(read('_\bX\bX_\bY\bY\n')).toBe('XY\n')
  })

  it('still summarizes a binary line full of backspaces that strike nothing over', () => {
    expect(read('\b\b\b\b\b\bab\n')).toMatch(/^\[9 bytes of binary output not shown/)
  })

  it('writes the note of a binary run after the last state of the redrawn line before it', () => {
    expect(read('\r10%\r20%', Buffer.alloc(64), 'text\n')).toBe('20%\n[64 bytes of binary output not shown; redirect it to a file and look at it with file, xxd or strings]\ntext\n')
  })
})
