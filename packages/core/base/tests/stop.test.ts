import { describe, expect, it } from 'vitest'
import { Stop } from '../src/index.ts'

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
})
