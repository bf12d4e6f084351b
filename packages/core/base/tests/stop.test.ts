import { afterEach, describe, expect, it, vi } from 'vitest'
import { Stop } from '../src/index.ts'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('Stop', () => {
  it('tells each listener once, with the first reason, and keeps that reason', () => {
    const stop = new Stop()
    const heard: unknown[] = []
    stop.onStop(() => heard.push(stop.reason))
    stop.onStop(() => heard.push('second'))
    expect(stop.stopped).toBe(false)
    stop.stop('first')
    stop.stop('later')
    expect(heard).toEqual(['first', 'second'])
    expect(stop.stopped).toBe(true)
    expect(stop.reason).toBe('first')
  })

  it('does not call a removed listener, nor one added after the stop', () => {
    const stop = new Stop()
    const heard: string[] = []
    const off = stop.onStop(() => heard.push('removed'))
    off()
    stop.stop(undefined)
    stop.onStop(() => heard.push('late'))
    stop.stop('again')
    expect(heard).toEqual([])
  })

  it('does not call a listener that an earlier one removed while being told, as an AbortSignal does not', () => {
    const stop = new Stop()
    const heard: string[] = []
    let offSecond = () => {}
    stop.onStop(() => {
      heard.push('first')
      offSecond()
    })
    offSecond = stop.onStop(() => heard.push('second'))
    stop.stop('why')
    expect(heard).toEqual(['first'])
  })

  it('tells the others when one listener throws, and throws its error on its own, not to the caller', () => {
    const later: (() => void)[] = []
    vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((task) => { later.push(task) })
    const stop = new Stop()
    const heard: string[] = []
    const broken = new Error('a broken listener')
    stop.onStop(() => {
      throw broken
    })
    stop.onStop(() => heard.push('second'))
    expect(() => stop.stop('why')).not.toThrow()
    expect(heard).toEqual(['second'])
    expect(later).toHaveLength(1)
    expect(() => later[0]!()).toThrow(broken)
  })
})
