// Where rewind keeps what it will not delete: one folder per rewind, two files of one path both kept.
import { readFile, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { keepCopy, setAside } from '../src/set-aside.ts'
import { tempRoot } from './harness.ts'

describe('set aside', () => {
  it('keeps two files of one path apart, even when the name already fills the 255-byte limit', async () => {
    for (const name of ['notes.txt', '記'.repeat(85)]) {
      const [first, second, folder] = [await tempRoot(), await tempRoot(), await tempRoot()]
      await writeFile(join(first, name), 'one')
      await writeFile(join(second, name), 'two')
      const kept = [await setAside(join(first, name), name, folder), await keepCopy(join(second, name), name, folder)]
      expect(kept[0]).not.toBe(kept[1])
      expect(await Promise.all(kept.map((file) => readFile(file ?? '', 'utf8')))).toEqual(['one', 'two'])
      expect(kept.every((file) => Buffer.byteLength(basename(file ?? '')) <= 255)).toBe(true)
    }
  })
})
