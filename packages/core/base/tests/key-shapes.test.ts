import { describe, expect, it } from 'vitest'
import { KEY_SHAPES, maskKeyShapes } from '../src/key-shapes.ts'

const GITHUB = `ghp_${'a1'.repeat(18)}`
const SK = `sk-${'b2'.repeat(12)}`

describe('maskKeyShapes', () => {
  it('masks every key in the text, of every shape, not only the first of each', () => {
    expect(maskKeyShapes(`one ${SK} two ${GITHUB} three ${SK}`)).toBe('one *** two *** three ***')
  })

  it('writes what a function says for each kind, and a $ in the mask as it is', () => {
    expect(maskKeyShapes(`token ${GITHUB}`, (kind) => `[${kind}]`)).toBe('token [a GitHub token]')
    expect(maskKeyShapes(`token ${GITHUB}`, '$&')).toBe('token $&')
  })

  it('leaves prose and the shapes themselves as they were (the shapes stay non-global, safe for .test)', () => {
    expect(maskKeyShapes('a skeleton key, sk-short, eyJ')).toBe('a skeleton key, sk-short, eyJ')
    expect(KEY_SHAPES.every(({ pattern }) => !pattern.global)).toBe(true)
  })

  it('masks all of a run that starts like a Google key and goes on past its 39 characters, leaving no tail', () => {
    expect(maskKeyShapes(`key AIza${'x1'.repeat(25)} end`)).toBe('key *** end')
  })
})
