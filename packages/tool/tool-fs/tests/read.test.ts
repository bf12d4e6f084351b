import { createServer } from 'node:net'
import { execFileSync } from 'node:child_process'
import { closeSync, mkdirSync, openSync, symlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { boot, codeOf, text, useFolders, write } from './harness.ts'

const folders = useFolders()
const numbered = (from: number, to: number, line = (n: number) => `line ${n}`) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${from + i}\t${line(from + i)}`).join('\n')

describe('read', () => {
  it('returns a small file whole, numbered from 1, with no footer', async () => {
    const { workspace } = folders()
    write(join(workspace, 'a.txt'), 'alpha\nbeta\n')
    const { call } = await boot(folders())
    const result = await call('read', { path: 'a.txt' })
    expect(text(result)).toBe('1\talpha\n2\tbeta')
    expect(result).toMatchObject({ isError: false, value: { path: 'a.txt', totalLines: 2, startLine: 1, binary: false } })
  })

  it('stops at the default limit and says which offset to read on from', async () => {
    const { workspace } = folders()
    write(join(workspace, 'long.txt'), Array.from({ length: 25 }, (_, i) => `line ${i + 1}`).join('\n'))
    const { call } = await boot(folders(), { config: { readLines: 10 } })
    expect(text(await call('read', { path: 'long.txt' }))).toBe(`${numbered(1, 10)}\n[Lines 1-10 of 25. To read on, call read with offset 11.]`)
    expect(text(await call('read', { path: 'long.txt', offset: 21 }))).toBe(numbered(21, 25))
    expect(text(await call('read', { path: 'long.txt', offset: 5, limit: 2 }))).toBe(`${numbered(5, 6)}\n[Lines 5-6 of 25. To read on, call read with offset 7.]`)
  })

  it('keeps a window under outputChars, so the agent never has to spill a read', async () => {
    const { workspace } = folders()
    write(join(workspace, 'wide.txt'), Array.from({ length: 400 }, (_, i) => `${i}`.padEnd(100, 'x')).join('\n'))
    const { call } = await boot(folders(), { config: { outputChars: 5000 } })
    const shown = text(await call('read', { path: 'wide.txt' }))
    expect(shown.length).toBeLessThanOrEqual(5000)
    expect(shown.split('\n').at(-1)).toMatch(/^\[Lines 1-\d+ of 400\. To read on, call read with offset \d+\.\]$/)
  })

  it('says where an offset is past the end', async () => {
    const { workspace } = folders()
    write(join(workspace, 'a.txt'), 'one\ntwo')
    const { call } = await boot(folders())
    expect(text(await call('read', { path: 'a.txt', offset: 9 }))).toBe('[a.txt has 2 lines; offset 9 is past the end.]')
    write(join(workspace, 'b.txt'), 'one')
    expect(text(await call('read', { path: 'b.txt', offset: 1_200 }))).toBe('[b.txt has 1 line; offset 1,200 is past the end.]')
  })

  it('says a file is empty', async () => {
    const { workspace } = folders()
    write(join(workspace, 'empty.txt'), '')
    const { call } = await boot(folders())
    expect(text(await call('read', { path: 'empty.txt' }))).toBe('[empty.txt is empty.]')
  })

  it('cuts a line past lineChars and says so', async () => {
    const { workspace } = folders()
    write(join(workspace, 'min.js'), `short\n${'y'.repeat(500)}\nend`)
    const { call } = await boot(folders(), { config: { lineChars: 100 } })
    expect(text(await call('read', { path: 'min.js' }))).toBe([
      '1\tshort',
      `2\t${'y'.repeat(100)} … [line cut]`,
      '3\tend',
      '[1 line is longer than 100 characters and was cut; grep finds text anywhere in a line.]',
    ].join('\n'))
  })

  it('cuts a line of emoji between characters, in read and in grep (never half a surrogate pair)', async () => {
    const { workspace } = folders()
    write(join(workspace, 'faces.txt'), `x${'😀'.repeat(300)}needle${'😀'.repeat(300)}`)
    const { call } = await boot(folders(), { config: { lineChars: 100 } })
    const read = text(await call('read', { path: 'faces.txt' }))
    const grep = text(await call('grep', { pattern: 'needle' }))
    expect(read).toContain('… [line cut]')
    expect(grep).toContain('needle')
    expect([read.match(/\p{Cs}/u), grep.match(/\p{Cs}/u)]).toEqual([null, null])
  })

  it('reads a 64 MiB single-line file without holding the line, and cuts it', async () => {
    const { workspace } = folders()
    const path = join(workspace, 'huge.json')
    const fd = openSync(path, 'w')
    const block = Buffer.alloc(1024 * 1024, 'a')
    for (let i = 0; i < 64; i++) writeSync(fd, block)
    closeSync(fd)
    const { call } = await boot(folders())
    const result = await call('read', { path: 'huge.json' })
    expect(result).toMatchObject({ isError: false, value: { totalLines: 1, cut: [1], size: 64 * 1024 * 1024 } })
    expect(text(result).length).toBeLessThan(2500)
  })

  it('reads the end of a 32 MiB text file by offset, counting every line', async () => {
    const { workspace } = folders()
    const path = join(workspace, 'big.log')
    const fd = openSync(path, 'w')
    const lines = 400_000
    const chunk = 10_000
    for (let from = 1; from <= lines; from += chunk) {
      writeSync(fd, Array.from({ length: chunk }, (_, i) => `${String(from + i).padStart(8, '0')} ${'.'.repeat(70)}\n`).join(''))
    }
    closeSync(fd)
    const { call } = await boot(folders())
    const result = await call('read', { path: 'big.log', offset: lines - 1 })
    expect(text(result)).toBe(`${lines - 1}\t00399999 ${'.'.repeat(70)}\n${lines}\t00400000 ${'.'.repeat(70)}`)
    expect(result).toMatchObject({ value: { totalLines: lines, size: lines * 80 } })
  })

  it('says a binary file is binary instead of showing it', async () => {
    const { workspace } = folders()
    write(join(workspace, 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]))
    const { call } = await boot(folders())
    const result = await call('read', { path: 'logo.png' })
    expect(text(result)).toBe('[logo.png is a binary file (12 bytes); read shows text files only.]')
    expect(result).toMatchObject({ isError: false, value: { binary: true, lines: [] } })
  })

  it('shows invalid UTF-8 as replacement characters and warns that it cannot be edited', async () => {
    const { workspace } = folders()
    write(join(workspace, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6f, 0x6b, 0x0a]))
    const { call } = await boot(folders())
    expect(text(await call('read', { path: 'latin1.txt' }))).toBe(
      '1\tcaf\uFFFD\n2\tok\n[Some bytes here are not valid UTF-8 and show as �; edit and write cannot change this file.]',
    )
  })

  it('hides CRLF line ends and a byte-order mark', async () => {
    const { workspace } = folders()
    write(join(workspace, 'win.txt'), '\uFEFFone\r\ntwo\r\n')
    const { call } = await boot(folders())
    expect(text(await call('read', { path: 'win.txt' }))).toBe('1\tone\n2\ttwo')
  })

  it('suggests the nearest name for a file that does not exist', async () => {
    const { workspace } = folders()
    mkdirSync(join(workspace, 'src'))
    write(join(workspace, 'src', 'index.ts'), 'x')
    const { call } = await boot(folders())
    const result = await call('read', { path: 'src/idnex.ts' })
    expect(result).toMatchObject({ isError: true, error: { code: 'FILE_NOT_FOUND', message: 'src/idnex.ts does not exist; did you mean src/index.ts?' } })
  })

  it('refuses a folder, a FIFO and a device with NOT_A_REGULAR_FILE, without hanging on the FIFO', async () => {
    const { workspace } = folders()
    mkdirSync(join(workspace, 'dir'))
    execFileSync('mkfifo', [join(workspace, 'pipe')])
    execFileSync('mknod', [join(workspace, 'null'), 'c', '1', '3'])
    const { call } = await boot(folders())
    expect(await call('read', { path: 'dir' })).toMatchObject({ isError: true, error: { code: 'NOT_A_REGULAR_FILE', message: 'dir is a folder; use glob to list what is in it' } })
    expect(await call('read', { path: 'pipe' })).toMatchObject({ isError: true, error: { code: 'NOT_A_REGULAR_FILE', message: 'pipe is a named pipe (FIFO), not a file' } })
    expect(await call('read', { path: 'null' })).toMatchObject({ isError: true, error: { code: 'NOT_A_REGULAR_FILE', message: 'null is a device, not a file' } })
  })

  it('refuses a Unix socket with NOT_A_REGULAR_FILE in read, write and edit, naming no host path', async () => {
    const { workspace } = folders()
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(join(workspace, 'app.sock'), resolve))
    try {
      const { call } = await boot(folders())
      for (const [name, args] of [['read', {}], ['edit', { old_string: 'a', new_string: 'b' }], ['write', { content: 'x' }]] as const) {
        const result = await call(name, { path: 'app.sock', ...args })
        expect({ name, result }).toMatchObject({ name, result: { isError: true, error: { code: 'NOT_A_REGULAR_FILE', message: 'app.sock is a socket, not a file' } } })
      }
    } finally {
      server.close()
    }
  })

  it('follows a symbolic link that stays inside the workspace', async () => {
    const { workspace } = folders()
    write(join(workspace, 'real.txt'), 'inside')
    symlinkSync('real.txt', join(workspace, 'alias.txt'))
    const { call } = await boot(folders())
    expect(text(await call('read', { path: 'alias.txt' }))).toBe('1\tinside')
  })

  it('reads a saved tool output in the spill folder by its absolute path, as the agent\'s preview names it', async () => {
    const { spill } = folders()
    write(join(spill, 'call_1.result.txt'), 'saved\noutput\n')
    const { call } = await boot(folders())
    expect(text(await call('read', { path: join(spill, 'call_1.result.txt'), offset: 2 }))).toBe('2\toutput')
  })

  it('never lets write, edit or glob use the spill folder', async () => {
    const { spill } = folders()
    write(join(spill, 'call_1.result.txt'), 'saved\n')
    const { call } = await boot(folders())
    await call('read', { path: join(spill, 'call_1.result.txt') })
    expect(codeOf(await call('write', { path: join(spill, 'call_1.result.txt'), content: 'x' }))).toBe('PATH_OUTSIDE_WORKSPACE')
    expect(codeOf(await call('edit', { path: join(spill, 'call_1.result.txt'), old_string: 'saved', new_string: 'x' }))).toBe('PATH_OUTSIDE_WORKSPACE')
    expect(codeOf(await call('write', { path: join(spill, 'new.txt'), content: 'x' }))).toBe('PATH_OUTSIDE_WORKSPACE')
  })
})
