// What the model reads of output made for a terminal, with real processes: colour and cursor
// sequences, NUL and other control bytes, carriage returns, binary data. The spill file holds the
// same text, so the preview's counts and the file agree.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { bootBash, text } from './helpers.ts'

const dir = mkdtempSync(join(tmpdir(), 'rein-bash-terminal-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A file of `size` bytes that looks like a compiled program: NUL runs, control bytes, bytes past ASCII. */
function binaryFile(size: number): string {
  const bytes = Buffer.alloc(size)
  for (let i = 0; i < size; i++) bytes[i] = i % 7 === 0 ? (i * 37) % 256 : i % 3 === 0 ? 0x01 + (i % 20) : 0
  const path = join(dir, `blob-${size}.bin`)
  writeFileSync(path, bytes)
  return path
}

const BINARY_NOTE = 'bytes of binary output not shown; redirect it to a file and look at it with file, xxd or strings]'

describe('output made for a terminal', () => {
  it('shows NUL and other control bytes as visible marks instead of passing them to the model raw', async () => {
    const { execute } = await bootBash()
    const result = await execute({ command: String.raw`printf 'a\0b\ac\bd\x7f\n'`, description: 'Controls' })
    expect(text(result)).toBe('a\u2400b\u2407c\u2408d\u2421\n[exit code: 0]')
  })

  it('strips colour escape sequences whole, not only their ESC byte', async () => {
    const { execute } = await bootBash()
    const result = await execute({ command: String.raw`printf 'a\0b\033[31mred\033[0m \033[1;38;5;208mbold\033[m\n'`, description: 'Colour' })
    expect(text(result)).toBe('a\u2400bred bold\n[exit code: 0]')
  })

  it('strips cursor movement, window titles and hyperlinks, keeping the text they wrap', async () => {
    const { execute } = await bootBash()
    const command = String.raw`printf '\033[2K\033[1Gstep\033]0;my title\007 \033]8;;https://example.com\033\\link\033]8;;\033\\ \033(Bdone\033[?25h\n'`
    expect(text(await execute({ command, description: 'Cursor' }))).toBe('step link done\n[exit code: 0]')
  })

  it('keeps only the last state of a line redrawn with carriage returns, and reads a CRLF as one break', async () => {
    const { execute } = await bootBash()
    const result = await execute({ command: String.raw`printf 'one\r\ntwo\r\n10%%\r20%%\r30%%\n'`, description: 'Progress' })
    expect(text(result)).toBe('one\ntwo\n30%\n[exit code: 0]')
  })

  it('shows a progress bar redrawn 1000 times as one line, its last state, instead of 1000 lines', async () => {
    const { execute } = await bootBash()
    const command = String.raw`for i in $(seq 1 1000); do printf '\rdownloading %4d/1000 [%3d%%]' $i $((i / 10)); done; echo; echo next`
    const result = await execute({ command, description: 'Bar' })
    expect(text(result)).toBe('downloading 1000/1000 [100%]\nnext\n[exit code: 0]')
  })

  it('reads a man page piped with nroff overstrike as its letters instead of calling it binary', async () => {
    const { execute } = await bootBash()
    const command = String.raw`printf 'N\bNA\bAM\bME\bE\n     ls - list\nB\bBo\bol\bld\bd and _\bu_\bn_\bd_\be_\br, _\bB\bB\n'`
    const result = await execute({ command, description: 'Man' })
    expect(text(result)).toBe('NAME\n     ls - list\nBold and under, B\n[exit code: 0]')
  })

  it('keeps a backspace that strikes nothing over as a visible mark', async () => {
    const { execute } = await bootBash()
    const result = await execute({ command: String.raw`printf 'working |\b/\b-\b done\nab\bc\n'`, description: 'Spinner' })
    expect(text(result)).toBe('working |\u2408/\u2408-\u2408 done\nab\u2408c\n[exit code: 0]')
  })

  it('keeps a NUL-separated list readable instead of calling it binary', async () => {
    const { execute } = await bootBash()
    const result = await execute({ command: String.raw`printf './a\0./b\0./c\0./d\0./e\0./f\0'`, description: 'List' })
    expect(text(result)).toBe('./a\u2400./b\u2400./c\u2400./d\u2400./e\u2400./f\u2400\n[exit code: 0]')
  })

  it('summarizes binary output in one line instead of dumping its bytes', async () => {
    const { execute } = await bootBash()
    const blob = binaryFile(5000)
    const result = await execute({ command: `echo before; cat ${blob}; printf '\\nafter\\n'`, description: 'Dump' })
    expect(text(result)).toBe(`before\n[5,001 ${BINARY_NOTE}\nafter\n[exit code: 0]`)
  })

  it('summarizes the start of a real program file printed with head', async () => {
    const { execute } = await bootBash()
    const result = await execute({ command: 'head -c 200 "$(command -v bash)"', description: 'Peek' })
    expect(text(result)).toBe(`[200 ${BINARY_NOTE}\n[exit code: 0]`)
  })

  it('marks a binary summary written to stderr as stderr', async () => {
    const { execute } = await bootBash()
    const result = await execute({ command: 'head -c 4096 /dev/zero >&2', description: 'Zeros' })
    expect(text(result)).toBe(`[stderr] [4,096 ${BINARY_NOTE}\n[exit code: 0]`)
  })

  it('counts long colourful output as the cleaned text the spill file holds', async () => {
    const { execute } = await bootBash({ outputChars: 2000 })
    const result = await execute({ command: String.raw`for i in $(seq 1 3000); do printf '\033[32m%05d\033[0m\r\n' $i; done`, description: 'Colour lines' })
    const shown = text(result)
    const value = result.isError ? undefined : result.value as { outputPath: string }
    const whole = Array.from({ length: 3000 }, (_, i) => `${String(i + 1).padStart(5, '0')}\n`).join('')
    expect(readFileSync(value?.outputPath ?? '', 'utf8')).toBe(whole)
    expect(shown).toContain(`The whole output (${whole.length.toLocaleString('en-US')} characters, 3,000 lines) is saved at ${value?.outputPath}`)
    expect(shown.endsWith('02999\n03000\n[exit code: 0]')).toBe(true)
  })
})
