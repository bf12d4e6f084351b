/**
 * A composition that cannot load stops every command that loads it with one `rein: …` line naming
 * the row, and exit 2 like any configuration error: a plugin whose apply never settles (Node alone
 * would exit 13 and print nothing), and a `disabled: !!js` expression that throws (the loader only
 * logs that, and `rein config` shows no log). One that never settles while it keeps a timer going
 * cannot be told from a slow one: rein says which row it waits for, and waits.
 */

import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { FIXTURES, spawnRein } from './harness.ts'

let dir: string | undefined
/** A rein that holds a timer forever: ended here if a test failed before it did. */
let waiting: ChildProcess | undefined
afterEach(() => {
  if (waiting && waiting.exitCode === null && waiting.signalCode === null) waiting.kill('SIGKILL')
  waiting = undefined
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
      `rein: CONFIG_INVALID: ${join(project, 'cordis.yml')} has 2 problems:`,
      '  - row "h" (./hang.mjs): never finished starting — its apply awaits something that can never settle; fix the plugin, or disable the row',
      '  - row "user" (./needs-hang.mjs): waits for the service "hung" from row "h" (./hang.mjs), which never finished starting (see its error); fix that row first',
      '',
    ].join('\n'))
  })

  it.each([[['config']], [['run', 'hi']]])('says which row is still starting when its apply never settles but keeps a timer going, and waits until SIGINT ends it (rein %j)', async (args) => {
    const project = folder(['- id: h', '  name: ./hang.mjs'], {
      'hang.mjs': "export const name = 'hang'\nexport async function apply() { setInterval(() => {}, 1000); await new Promise(() => {}) }\n",
    })
    // A test hook: the notice comes after 1 ms, not 10 s.
    const run = await spawnRein(project, args, undefined, { REIN_HOME: join(project, 'home'), REIN_SLOW_START_MS: '1' }, [], (child) => {
      waiting = child
      let stderr = ''
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString()
        if (stderr.endsWith('\n')) child.kill('SIGINT')
      })
    })
    // Ctrl-C stops the load at once, as the line says: the load is given up and rein ends 130,
    // leaving the row that never started.
    expect(run).toMatchObject({ code: 130, signal: null, stdout: '' })
    const still = `rein: ${join(project, 'cordis.yml')} is still loading after 1 ms: row "h" (./hang.mjs) has not finished`
    // After 1 ms its module may still be importing, or its apply already running: the row is named either way.
    const [said = ''] = run.stderr.split(/(?<=\n)/)
    expect([
      `${still} starting — its apply has not settled; still waiting (Ctrl-C to stop)\n`,
      `${still} loading its module — a top-level await in it has not settled; still waiting (Ctrl-C to stop)\n`,
    ]).toContain(said)
    expect(run.stderr).toContain('SIGINT: stopping the composition\'s load (nothing ran)')
  })

  it('says what a disabled !!js expression threw, in rein config, which prints no log', async () => {
    const project = folder(['- id: tools', "  name: '@rein/tools'", `  disabled: !!js "(() => { throw new Error('REIN_TOOLS_OFF is not set') })()"`])
    const run = await spawnRein(project, ['config'], undefined, { REIN_HOME: join(project, 'home') })
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toBe([
      `rein: CONFIG_INVALID: ${join(project, 'cordis.yml')} has a problem:`,
      '  - row "tools" (@rein/tools): disabled: the !!js expression threw: REIN_TOOLS_OFF is not set',
      '',
    ].join('\n'))
  })
  it.each([[['run', 'hi']], [['sessions']]])("prints a plugin's start failure once, in the problem list, though cordis logged it and its cause (rein %j)", async (args) => {
    const badSchema = join(FIXTURES, 'bad-schema.mjs')
    const project = folder(['- id: tools', "  name: '@rein/tools'", '- id: noisy', '  name: ./noisy.mjs', '- id: t', `  name: '${badSchema}'`, '- id: thrower', '  name: ./thrower.mjs'], {
      // An error that no problem states is still printed.
      'noisy.mjs': "export const name = 'noisy'\nexport function apply(ctx) { ctx.logger('noisy').error(new Error('the cache is cold')) }\n",
      'thrower.mjs': "export const name = 'thrower'\nexport function apply() { throw new Error('no licence key found') }\n",
    })
    const run = await spawnRein(project, args, undefined, { REIN_HOME: join(project, 'home') })
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toBe([
      '[error] noisy: Error: the cache is cold',
      `rein: CONFIG_INVALID: ${join(project, 'cordis.yml')} has 2 problems:`,
      `  - row "t" (${badSchema}): failed to start: tool "bad_schema": parameters: $.properties.text: unknown key "requird" (did you mean "required"?)`,
      '  - row "thrower" (./thrower.mjs): failed to start: no licence key found',
      '',
    ].join('\n'))
  })
})
