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
