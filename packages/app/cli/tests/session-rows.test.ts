// The rows a chat's session lives in are named in a steady order: the registry lists a row again
// after it restarts, so an earlier edit could turn `rows "sessions" and "store"` around.
import type { Entry } from '@deepseek-ai/cordis-plugin-loader'
import { describe, expect, it } from 'vitest'
import { describeTouched, touchedRows } from '../src/session-rows.ts'

const entry = (id: string) => ({ options: { id, name: `@rein/${id}` } }) as unknown as Entry

describe('touchedRows', () => {
  it('names the rows an edit removes in the running file\'s order, whatever order the registry gave them in', () => {
    for (const rows of [[entry('store'), entry('sessions')], [entry('sessions'), entry('store')]]) {
      expect(describeTouched(touchedRows(rows, [], ['llm', 'sessions', 'store']))).toBe('rows "sessions" and "store", which the edit removes')
      expect(describeTouched(touchedRows(rows, [], ['store', 'sessions']))).toBe('rows "store" and "sessions", which the edit removes')
    }
  })
})
