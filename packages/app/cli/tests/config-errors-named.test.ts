/**
 * A configuration error says its stable code in its one line, without -v, so it can be looked up
 * in the READMEs; and a provider named on the agents row that no provider row registers is tied
 * to the file and the row, with the nearest provider when one is close.
 */

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, rein } from './harness.ts'

const setUp = projectPerTest(afterEach)

describe('a configuration error without -v', () => {
  it('shows CONFIG_NOT_FOUND in the one line for a --config that does not exist', async () => {
    const p = await setUp([])
    const run = await rein(p.dir, ['run', '--config', 'missing.yml', 'hi'])
    expect(run).toMatchObject({ code: 2, stdout: '', stderr: `rein: CONFIG_NOT_FOUND: ${join(p.dir, 'missing.yml')}: no such file\n` })
  })

  it('shows CONFIG_INVALID in the first line of a cordis.yml with a bad row', async () => {
    const p = await setUp([])
    writeFileSync(join(p.dir, 'cordis.yml'), '- id: x\n  nme: y\n')
    const run = await rein(p.dir, ['run', 'hi'])
    expect(run.code).toBe(2)
    expect(run.stderr.split('\n')[0]).toBe(`rein: CONFIG_INVALID: ${join(p.dir, 'cordis.yml')} has 2 problems:`)
  })
})

describe('a provider typo on the agents row', () => {
  it('names the cordis.yml, the row and the field, and the provider it is close to', async () => {
    const p = await setUp([], { agent: { provider: 'mokc' } })
    const run = await rein(p.dir, ['run', 'hi'])
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toBe([
      `rein: UNKNOWN_PROVIDER: ${join(p.dir, 'cordis.yml')} has a problem:`,
      '  - row "agents" (@rein/agent): config.provider: no loaded provider serves "mokc"; did you mean mock? (loaded: mock; a provider row\'s config.provider names it)',
      '',
    ].join('\n'))
    expect(p.server.requests).toHaveLength(0)
  })

  it('names the fallback route by its field, and lists the loaded providers when none is close', async () => {
    const p = await setUp([], { agent: { fallbacks: [{ provider: 'elsewhere', model: 'm' }] } })
    const run = await rein(p.dir, ['run', 'hi'])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('  - row "agents" (@rein/agent): config.fallbacks[0].provider: no loaded provider serves "elsewhere"; loaded: mock (add its provider row, or name one of those)\n')
  })

  it('leaves a --provider typo as the flag\'s, with the provider it is close to', async () => {
    const p = await setUp([])
    const run = await rein(p.dir, ['run', '--provider', 'mokc', 'hi'])
    expect(run).toMatchObject({ code: 2, stderr: 'rein: --provider mokc: no loaded provider serves "mokc"; did you mean mock? (loaded: mock)\n' })
  })
})
