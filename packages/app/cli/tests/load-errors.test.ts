/**
 * A composition that cannot load stops every command that loads it with one `rein: …` line naming
 * the row, and exit 2 like any configuration error: a plugin whose apply never settles (Node alone
 * would exit 13 and print nothing), and a `disabled: !!js` expression that throws (the loader only
 * logs that, and `rein config` shows no log).
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { spawnRein } from './harness.ts'

let dir: string | undefined
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

/** A folder with `files` and a cordis.yml of `rows`; its REIN_HOME inside it. */
function folder(rows: string[], files: Record<string, string> = {}): string {
  dir = mkdtempSync(join(tmpdir(), 'rein-load-errors-'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  writeFileSync(join(dir, 'cordis.yml'), `${rows.join('\n')}\n`)
  return dir
}

describe('a composition that cannot load', () => {
  it.each([[['config']], [['run', 'hi']], [['sessions']]])('says which row never finished starting when its apply awaits forever (rein %j)', async (args) => {
    const project = folder(['- id: h', '  name: ./hang.mjs', '- id: user', '  name: ./needs-hang.mjs', '- id: tools', "  name: '@rein/tools'"], {
      'hang.mjs': "export const name = 'hang'\nexport const provide = 'hung'\nexport async function apply() { await new Promise(() => {}) }\n",
      'needs-hang.mjs': "export const name = 'needs-hang'\nexport const inject = ['hung']\nexport function apply() {}\n",
    })
    const run = await spawnRein(project, args, undefined, { REIN_HOME: join(project, 'home') })
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toBe([
      `rein: ${join(project, 'cordis.yml')} has 2 problems:`,
      '  - row "h" (./hang.mjs): never finished starting — its apply awaits something that can never settle; fix the plugin, or disable the row',
      '  - row "user" (./needs-hang.mjs): waits for the service "hung" from row "h" (./hang.mjs), which never finished starting (see its error); fix that row first',
      '',
    ].join('\n'))
  })

  it('says what a disabled !!js expression threw, in rein config, which prints no log', async () => {
    const project = folder(['- id: tools', "  name: '@rein/tools'", `  disabled: !!js "(() => { throw new Error('REIN_TOOLS_OFF is not set') })()"`])
    const run = await spawnRein(project, ['config'], undefined, { REIN_HOME: join(project, 'home') })
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toBe([
      `rein: ${join(project, 'cordis.yml')} has a problem:`,
      '  - row "tools" (@rein/tools): disabled: the !!js expression threw: REIN_TOOLS_OFF is not set',
      '',
    ].join('\n'))
  })
})
