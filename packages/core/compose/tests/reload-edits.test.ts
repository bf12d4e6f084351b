// Edits as editors and hurried users make them while a composition runs: a save by rename, the file
// deleted and written again, two saves in quick succession, an edit to one row while another works.
import { renameSync, rmSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { loadComposition } from '../src/index.ts'
import { fixtures, installed, rejection, useComposition } from './harness.ts'

const { log, writeConfig, load } = useComposition()

const recorders = (...names: string[]) => names.map((name) => {
  const [id, label = id] = name.split('=')
  return `- id: ${id}\n  name: FIXTURES/recorder.ts\n  config: {name: ${label}}\n`
}).join('')

describe('edits to a running composition', () => {
  it('applies a save made by writing a new file and renaming it over the old one, as editors save', async () => {
    const file = writeConfig(recorders('a', 'b'))
    const composition = await load(file)
    writeFileSync(`${file}.swp`, recorders('a', 'b=b2').replaceAll('FIXTURES/', fixtures))
    renameSync(`${file}.swp`, file)
    expect(await composition.reload()).toEqual({ added: [], removed: [], changed: ['b'] })
    expect(log()).toEqual(['start a', 'start b', 'stop b', 'start b2'])
  })

  it('keeps every row running when the file is deleted, and applies it when it is written again', async () => {
    const file = writeConfig(recorders('a', 'b'))
    const composition = await load(file)
    rmSync(file)
    expect((await rejection(composition.reload())).code).toBe('CONFIG_NOT_FOUND')
    expect(log()).toEqual(['start a', 'start b'])
    writeConfig(recorders('a'))
    expect(await composition.reload()).toEqual({ added: [], removed: ['b'], changed: [] })
    expect(log()).toEqual(['start a', 'start b', 'stop b'])
  })

  it('keeps every row running when the file is emptied mid-save, and applies the saved text after', async () => {
    const file = writeConfig(recorders('a'))
    const composition = await load(file)
    writeConfig('')
    expect((await rejection(composition.reload())).problems).toEqual(['the file has no rows: list the plugin rows (- id: …, name: …), one per plugin'])
    writeConfig(recorders('a=a2'))
    expect(await composition.reload()).toEqual({ added: [], removed: [], changed: ['a'] })
    expect(log()).toEqual(['start a', 'stop a', 'start a2'])
  })

  it('ends on the last of two quick saves, each reload reporting against the one before', async () => {
    const file = writeConfig(recorders('a'))
    const composition = await load(file)
    writeConfig(recorders('a=a2'))
    const first = composition.reload()
    writeConfig(recorders('a=a3'))
    const second = composition.reload()
    const reports = await Promise.all([first, second])
    // The first reload may read either save; together they change the row once or twice, and the last save runs.
    expect(reports.flatMap((report) => report.changed).length).toBeGreaterThan(0)
    expect(composition.rows().map((row) => row.config)).toEqual([{ name: 'a3' }])
    expect(log().at(-1)).toBe('start a3')
  })

  it('does not restart a row an edit leaves alone, nor one that only moved in the file', async () => {
    const file = writeConfig(recorders('a', 'b'))
    const composition = await load(file)
    writeConfig(`# moved\n${recorders('b', 'a', 'c')}`)
    expect(await composition.reload()).toEqual({ added: ['c'], removed: [], changed: [] })
    expect(log()).toEqual(['start a', 'start b', 'start c'])
  })

  it('removes a row and starts it afresh when it is added back', async () => {
    const file = writeConfig(recorders('a', 'b'))
    const composition = await load(file)
    writeConfig(recorders('a'))
    await composition.reload()
    writeConfig(recorders('a', 'b'))
    expect(await composition.reload()).toEqual({ added: ['b'], removed: [], changed: [] })
    expect(log()).toEqual(['start a', 'start b', 'stop b', 'start b'])
  })
})

describe('disposal', () => {
  it('leaves no timer, watcher or handle behind after loading, reloading and disposing real providers', async () => {
    const before = process.getActiveResourcesInfo()
    const file = writeConfig(writeConfigText('http://127.0.0.1:9/v1'))
    const composition = await loadComposition({ file, resolveFrom: installed.llmOpenai, onSlow: () => undefined })
    writeConfig(writeConfigText('http://127.0.0.1:10/v1'))
    await composition.reload({ onSlow: () => undefined })
    await composition.dispose()
    await new Promise((settle) => setImmediate(settle))
    expect(leftOver(before, process.getActiveResourcesInfo())).toEqual([])
  })
})

function writeConfigText(baseURL: string): string {
  return `- id: llm\n  name: '@rein/llm'\n- id: openai\n  name: '@rein/llm-openai'\n  config: {baseURL: "${baseURL}", apiKeyEnv: false}\n`
}

/** The resources in `after` beyond those in `before`, each kind counted. */
function leftOver(before: string[], after: string[]): string[] {
  const remaining = [...before]
  return after.filter((kind) => {
    const at = remaining.indexOf(kind)
    if (at === -1) return true
    remaining.splice(at, 1)
    return false
  })
}
