// Boots the repository's examples/cordis.yml, which loads this package by name, the way a user's project would.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isReinError } from '@rein/base'
import { loadComposition, type Composition } from '@rein/compose'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const examples = fileURLToPath(new URL('../../', import.meta.url))
const original = join(examples, 'cordis.yml')
/**
 * Where the names resolve, as under `rein --config examples/cordis.yml`: from examples/ (this
 * package is installed there), then from the rein command's own dependencies (@rein/agent, …).
 */
const resolveFrom = [examples, fileURLToPath(new URL('../../../packages/app/cli/', import.meta.url))]
let dir: string
let composition: Composition | undefined
const home = process.env.REIN_HOME

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rein-example-'))
  // The example's session store keeps its logs under $REIN_HOME: never the developer's ~/.rein.
  process.env.REIN_HOME = dir
})
afterEach(async () => {
  await composition?.dispose()
  composition = undefined
  delete process.env.REIN_CLOCK_TIME_ZONE
  if (home === undefined) delete process.env.REIN_HOME
  else process.env.REIN_HOME = home
  rmSync(dir, { recursive: true, force: true })
})

/** A temp copy of the example composition; names still resolve from `resolveFrom`. */
function copy(edit: (text: string) => string = (text) => text) {
  const file = join(dir, 'cordis.yml')
  copyFileSync(original, file)
  writeFileSync(file, edit(readFileSync(file, 'utf8')))
  return file
}

const run = (c: Composition, args: object) => c.ctx.tools.execute({
  callId: 'c1', name: 'current_time', arguments: JSON.stringify(args), signal: new AbortController().signal,
})

describe('examples/cordis.yml', () => {
  it('loads the tool package by name, with a Config value from the environment', async () => {
    process.env.REIN_CLOCK_TIME_ZONE = 'Asia/Tokyo'
    const before = readFileSync(original, 'utf8')
    composition = await loadComposition({ file: copy(), resolveFrom })
    expect(composition.ctx.tools.list()).toContain('current_time')
    const result = await run(composition, {})
    expect(result).toMatchObject({ isError: false, value: { timeZone: 'Asia/Tokyo' } })
    expect(readFileSync(original, 'utf8')).toBe(before)
  })

  it('takes the tool away when its row is removed from the file', async () => {
    const file = copy()
    composition = await loadComposition({ file, resolveFrom })
    expect((await run(composition, {})).isError).toBe(false)
    writeFileSync(file, readFileSync(file, 'utf8').replace(/- id: clock[\s\S]*$/, ''))
    await composition.reload()
    expect(composition.ctx.tools.list()).not.toContain('current_time')
    const gone = await run(composition, {})
    expect(gone.isError && gone.error.code).toBe('UNKNOWN_TOOL')
  })

  it('fails loudly on a bad Config value, naming the row and the field', async () => {
    const file = copy((text) => text.replace(/timeZone: .*/, 'timeZone: 42'))
    const error = await loadComposition({ file, resolveFrom }).then(() => undefined, (caught: unknown) => caught)
    expect(isReinError(error, 'CONFIG_INVALID')).toBe(true)
    expect((error as Error).message).toContain('row "clock" (rein-tool-clock): config.timeZone: expected string but got 42')
  })

  it('fails loudly on a package that is not installed', async () => {
    const file = copy((text) => text.replace('name: rein-tool-clock', 'name: rein-tool-calendar'))
    await expect(loadComposition({ file, resolveFrom })).rejects.toThrow(
      /row "clock" \(rein-tool-calendar\): cannot load the plugin: Cannot find package 'rein-tool-calendar'/,
    )
  })

  it('fails loudly when the tools service row is missing', async () => {
    const file = copy((text) => text.replace(/- id: tools\n\s+name: '@rein\/tools'\n/, ''))
    await expect(loadComposition({ file, resolveFrom })).rejects.toThrow(
      'row "clock" (rein-tool-clock): waits for the service "tools" that no row provides',
    )
  })
})
