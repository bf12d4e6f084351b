// The command line as `parseCommandLine` reads it, and as a person meets it through the real `rein`.
import { describe, expect, it } from 'vitest'
import { parseCommandLine } from '../src/args.ts'
import { rein } from './harness.ts'

describe('rein: a flag that takes one value', () => {
  it('refuses `rewind --to 5 --to 2` with exit 2 naming --to, rather than silently taking the last', async () => {
    const run = await rein('/', ['rewind', 'some-session', '--to', '5', '--to', '2'])
    expect(run).toMatchObject({ code: 2, stderr: 'rein: --to was given more than once ("5", "2"); it takes one value\n' })
  })

  it('refuses every single-value flag given twice, by its long name whichever spelling was used', () => {
    for (const [argv, flag] of [
      [['run', '--model', 'a', '-m', 'b', 'x'], '--model'],
      [['run', '-c', 'a.yml', '--config=b.yml', 'x'], '--config'],
      [['run', '--max-steps', '1', '--max-steps', '2', 'x'], '--max-steps'],
      [['run', '-s', 'one', '-s', 'two', 'x'], '--session'],
      [['resume', 'id', '--provider', 'a', '--provider', 'b'], '--provider'],
    ] as const) {
      expect(() => parseCommandLine(argv)).toThrow(`${flag} was given more than once`)
    }
  })

  it('refuses one given twice with the same value, and beside --help, as the README says', () => {
    expect(() => parseCommandLine(['run', '-m', 'a', '--model', 'a', 'x'])).toThrow('--model was given more than once ("a", "a")')
    expect(() => parseCommandLine(['run', '-m', 'a', '-m', 'b', '--help'])).toThrow('--model was given more than once')
  })

  it('still takes --allow repeated (it adds up) and a switch given twice', () => {
    const parsed = parseCommandLine(['run', '--allow', 'write', '--allow', 'exec', '--yes', '-y', 'x'])
    expect(parsed.options).toMatchObject({ allow: ['write', 'exec'], yes: true })
  })
})

/** A command that takes each value flag, and the flag's short spelling if it has one. */
const VALUE_FLAGS = [
  ['config', 'sessions', '-c'],
  ['provider', 'run', undefined],
  ['model', 'run', '-m'],
  ['system', 'run', undefined],
  ['max-steps', 'run', undefined],
  ['max-output-tokens', 'run', undefined],
  ['max-cost', 'run', undefined],
  ['session', 'run', '-s'],
  ['to', 'rewind', undefined],
  ['allow', 'run', undefined],
] as const

/** argv for `command` with `middle` among its usual arguments. */
function argvOf(command: string, middle: readonly string[]): string[] {
  if (command === 'run') return ['run', ...middle, 'x']
  if (command === 'rewind') return ['rewind', 'abc', ...middle]
  return [command, ...middle]
}

describe('rein: an unknown flag', () => {
  // Every command said `a task or message that starts with a dash goes after '--' (rein run -- "--bogus …")`.
  it('gets each command\'s own refusal, with the "--" advice only where a free text goes, naming that command', async () => {
    for (const [argv, command, advice] of [
      [['sessions', '--bogus'], 'sessions', undefined],
      [['show', 'abc', '--bogus'], 'show', undefined],
      [['config', '-x'], 'config', undefined],
      [['memory', 'list', '--bogus'], 'memory', undefined],
      [['memory', 'forget', 'mem_1', '--bogus'], 'memory', undefined],
      [['rewind', 'abc', '--to', '1', '--bogus'], 'rewind', undefined],
      [['demo', '--bogus'], 'demo', undefined],
      [['chat', '--bogus'], 'chat', undefined],
      [['run', '--bogus', 'x'], 'run', `a task that starts with a dash goes after '--': rein run -- "--bogus …"`],
      [['run', '-x task'], 'run', `a task that starts with a dash goes after '--': rein run -- "-x task"`],
      [['resume', 'abc', '--bogus'], 'resume', `a message that starts with a dash goes after '--': rein resume abc -- "--bogus …"`],
      [['compact', 'abc', '-z'], 'compact', `a text that starts with a dash goes after '--': rein compact abc -- "-z …"`],
      [['memory', 'search', '--bogus'], 'memory', `a query that starts with a dash goes after '--': rein memory search -- "--bogus …"`],
    ] as const) {
      const flag = argv.findLast((arg) => arg.startsWith('-'))!.split(' ')[0]
      const said = `rein: rein ${command} does not take ${flag}; ${advice ? `${advice}; ` : ''}see rein ${command} --help\n`
      expect({ argv, ...(await rein('/', [...argv])) }).toEqual({ argv, code: 2, stdout: '', stderr: said })
    }
    expect(await rein('/', ['-V'])).toEqual({ code: 2, stdout: '', stderr: 'rein: rein does not take -V; see rein --help\n' })
    expect(await rein('/', ['--bogus=1', 'sessions'])).toMatchObject({ code: 2, stderr: 'rein: rein sessions does not take --bogus; see rein sessions --help\n' })
  })

  it('names a query or text that reads as short flags as typed, with the "--" advice, not the flags Node made of it', async () => {
    for (const [argv, command, typed, before] of [
      [['memory', 'search', '-minus'], 'memory', '-minus', 'rein memory search'],
      [['memory', 'search', '-y'], 'memory', '-y', 'rein memory search'],
      [['memory', 'search', '-vitest'], 'memory', '-vitest', 'rein memory search'],
      [['compact', 'abc', '-yes'], 'compact', '-yes', 'rein compact abc'],
    ] as const) {
      const said = `rein: rein ${command} does not take ${typed}; a ${command === 'memory' ? 'query' : 'text'} that starts with a dash goes after '--': ${before} -- "${typed} …"; see rein ${command} --help\n`
      expect({ argv, ...(await rein('/', [...argv])) }).toEqual({ argv, code: 2, stdout: '', stderr: said })
    }
  })

  it('advises a form that works: the text after "--" reaches the command', () => {
    expect(parseCommandLine(['run', '--', '--bogus x']).positionals).toEqual(['--bogus x'])
    expect(parseCommandLine(['resume', 'abc', '--', '--bogus x']).positionals).toEqual(['abc', '--bogus x'])
    expect(parseCommandLine(['compact', 'abc', '--', '-z x']).positionals).toEqual(['abc', '-z x'])
    expect(parseCommandLine(['memory', 'search', '--', '--bogus']).positionals).toEqual(['search', '--bogus'])
  })
})

describe('rein: a flag value that starts with a dash, or is missing', () => {
  // `--max-steps -1` printed Node's three lines: "argument is ambiguous.\nDid you forget …".
  it('is one usage line naming the flag, never Node\'s multi-line text, for every flag that takes a value', async () => {
    for (const [flag, command, short] of VALUE_FLAGS) {
      for (const spelling of [`--${flag}`, ...(short ? [short] : [])]) {
        for (const argv of [argvOf(command, [spelling, '-1']), argvOf(command, [spelling, '-x']), argvOf(command, [spelling, '--json'])]) {
          const run = await rein('/', argv)
          expect({ argv, code: run.code, lines: run.stderr.split('\n').length - 1 }).toEqual({ argv, code: 2, lines: 1 })
          expect(run.stderr).toContain(`--${flag} `)
          expect(run.stderr).not.toMatch(/ambiguous|Did you forget|see rein --help/)
        }
        const missing = await rein('/', [...argvOf(command, []), spelling])
        expect({ spelling, ...missing }).toEqual({ spelling, code: 2, stdout: '', stderr: `rein: --${flag} needs a value; see rein ${command} --help\n` })
      }
    }
  })

  it('of a numeric flag is refused as "=-1" is: needs a positive number', async () => {
    for (const flag of ['max-steps', 'max-output-tokens', 'max-cost']) {
      for (const raw of ['-1', '-5', '-0.5']) {
        const spaced = await rein('/', ['run', `--${flag}`, raw, 'x'])
        expect(spaced.stderr).toMatch(new RegExp(`^rein: --${flag} needs a positive (whole )?number, not "${raw}"\\n$`))
        expect(spaced).toEqual(await rein('/', ['run', `--${flag}=${raw}`, 'x']))
      }
    }
  })

  it('of another flag says how to give it: --model=-x', async () => {
    expect(await rein('/', ['run', '-m', '-x', 'hi'])).toMatchObject({ code: 2, stderr: 'rein: --model needs a value, and "-x" looks like a flag; a value that starts with a dash goes as --model=-x\n' })
    // A value with a space is quoted, so the advice pasted into a shell stays one argument.
    expect(await rein('/', ['run', '--system', '-be terse', 'hi'])).toMatchObject({ code: 2, stderr: `rein: --system needs a value, and "-be terse" looks like a flag; a value that starts with a dash goes as --system='-be terse'\n` })
    expect(parseCommandLine(['run', '--model=-x', 'hi']).options.model).toBe('-x')
    // A lone "-" is a value (stdin, say), as Node takes it.
    expect(parseCommandLine(['run', '--system', '-', 'hi']).options.system).toBe('-')
  })

  it('a switch given a value is one line too', async () => {
    expect(await rein('/', ['sessions', '--json=yes'])).toMatchObject({ code: 2, stderr: 'rein: --json takes no value, not "yes"; see rein sessions --help\n' })
  })
})

describe('rein: an empty flag value', () => {
  // `--config ''` fell back to ./cordis.yml, then the built-in composition; `--model ''` to REIN_MODEL.
  it('is a usage error naming the flag, for every flag that takes a value, however it is spelled', async () => {
    for (const [flag, command, short] of VALUE_FLAGS) {
      for (const middle of [[`--${flag}`, ''], [`--${flag}=`], ...(short ? [[short, '']] : [])]) {
        const argv = argvOf(command, middle)
        expect({ argv, ...(await rein('/', argv)) }).toEqual({ argv, code: 2, stdout: '', stderr: `rein: --${flag} is empty; give it a value or leave it out\n` })
      }
    }
  })

  it('is refused before anything loads: rein --config "" config does not fall back to a composition', async () => {
    for (const argv of [['--config', '', 'config'], ['--config=', 'config'], ['-c', '', 'config']]) {
      const run = await rein('/', argv)
      expect({ argv, ...run }).toEqual({ argv, code: 2, stdout: '', stderr: 'rein: --config is empty; give it a value or leave it out\n' })
    }
  })
})

describe('rein memory: --all', () => {
  // search, forget and export took --all and ignored it (exit 0).
  it('is refused by every subcommand but list, as any flag a command does not take', async () => {
    for (const argv of [['memory', 'search', 'words', '--all'], ['memory', 'forget', 'mem_1', '--all'], ['memory', '--all', 'export']]) {
      const sub = argv.find((arg) => ['search', 'forget', 'export'].includes(arg))
      expect({ argv, ...(await rein('/', argv)) }).toEqual({ argv, code: 2, stdout: '', stderr: `rein: rein memory ${sub} does not take --all; see rein memory --help\n` })
    }
  })
})
