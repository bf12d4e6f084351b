import { describe, expect, it } from 'vitest'
import { closest } from '../src/index.ts'

describe('closest', () => {
  it('finds a misspelled key, counting a swap of neighbours once and ignoring case', () => {
    expect(closest('baseUrl', ['provider', 'baseURL', 'label'])).toBe('baseURL')
    expect(closest('requird', ['required', 'description'])).toBe('required')
    expect(closest('minLenght', ['minLength', 'maxLength'])).toBe('minLength')
    expect(closest('lable', ['label', 'models'])).toBe('label')
  })

  it('suggests nothing when no key is near enough to be a typo', () => {
    expect(closest('colour', ['provider', 'baseURL'])).toBeUndefined()
    expect(closest('x', [])).toBeUndefined()
  })
})
