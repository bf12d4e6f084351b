// Loads @rein/memory from a cordis.yml by package name, as a user's project does, and takes it out again.
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { useCordisYml } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { InMemoryMemoryStore } from '../src/index.ts'
import { storePlugin, useTempHome } from './harness.ts'

useTempHome()
const yml = useCordisYml(afterEach, fileURLToPath(new URL('..', import.meta.url)))
const TOOLS_ROW = ['- id: tools', "  name: '@rein/tools'"]

describe('@rein/memory in a cordis.yml', () => {
  it('provides ctx.memory with its Config; its tools come with a store and go with the row', async () => {
    const file = yml.write([...TOOLS_ROW, '- id: memory', "  name: '@rein/memory'", '  config:', '    maxContentChars: 300'])
    const composition = await yml.load(file)
    const { ctx } = composition
    expect(ctx.memory.hasStore()).toBe(false)
    expect(ctx.tools.list()).toEqual([])
    const store = new InMemoryMemoryStore()
    await ctx.plugin(storePlugin(store))
    expect(ctx.tools.list()).toEqual(['memory_forget', 'memory_search', 'memory_update', 'memory_write'])
    expect(ctx.tools.schemas().find((schema) => schema.name === 'memory_write')!.description).toContain('at most 300 characters')
    writeFileSync(file, [...TOOLS_ROW, ''].join('\n'))
    await composition.reload()
    expect(ctx.get('memory')).toBeUndefined()
    expect(ctx.tools.list()).toEqual([])
    expect(store.closed).toBe(true)
  })

  it('fails the load, naming the row and the field, on a bad config value', async () => {
    const file = yml.write([...TOOLS_ROW, '- id: memory', "  name: '@rein/memory'", '  config:', '    scopes:', '      read: [session]'])
    await expect(yml.load(file)).rejects.toThrow('row "memory" (@rein/memory): config.scopes.read')
  })

  it('refuses a prompt block of more than 20 entries', async () => {
    const file = yml.write([...TOOLS_ROW, '- id: memory', "  name: '@rein/memory'", '  config:', '    prompt:', '      maxEntries: 21'])
    await expect(yml.load(file)).rejects.toThrow('row "memory" (@rein/memory): config.prompt.maxEntries')
  })
})
