import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { shellWord } from '../src/index.ts'

describe('shellWord', () => {
  it('leaves a plain word as it is and quotes anything a shell would split or expand', () => {
    expect(shellWord('d/new.txt')).toBe('d/new.txt')
    expect(shellWord('my dir')).toBe("'my dir'")
  })

  it('reads back, through sh, as the very value: spaces, $, backticks, quotes, a line break', () => {
    for (const value of ['my dir', '$HOME', '`id`', "it's", 'a"b', 'line\nbreak', '-be terse', '!x']) {
      expect(execFileSync('sh', ['-c', `printf %s ${shellWord(value)}`], { encoding: 'utf8' })).toBe(value)
    }
  })
})
