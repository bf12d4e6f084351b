// DeepSeek's row keeps its own name at DeepSeek's host; pointed elsewhere it names that host.
import { describe, expect, it } from 'vitest'
import { Config } from '../src/index.ts'

describe('the label a DeepSeek row without one gets', () => {
  it('is DeepSeek at api.deepseek.com, and the host elsewhere', () => {
    expect(Config({}).label).toBe('DeepSeek')
    expect(Config(undefined as never).label).toBe('DeepSeek')
    expect(Config({ baseURL: 'https://api.deepseek.com/v1' }).label).toBe('DeepSeek')
    expect(Config({ baseURL: 'http://127.0.0.1:8000' }).label).toBe('127.0.0.1:8000')
  })
})
