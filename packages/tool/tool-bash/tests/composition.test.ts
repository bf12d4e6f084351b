// Loads the package by name from a cordis.yml, the way a user's composition does, and takes it
// out again by editing the file.
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadComposition, type Composition } from '@rein/compose'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

const packageDir = fileURLToPath(new URL('..', import.meta.url))
let dir: string
let composition: Composition | undefined

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'rein-bash-yml-')))
})
afterEach(async () => {
  await composition?.dispose()
  composition = undefined
  rmSync(dir, { recursive: true, force: true })
})

function yml(bashConfig: string[] = []) {
  return [
    '- id: tools',
    "  name: '@rein/tools'",
    '  config:',
    '    askFor: []',
    '- id: bash',
    "  name: '@rein/tool-bash'",
    ...(bashConfig.length ? ['  config:', ...bashConfig.map((line) => `    ${line}`)] : []),
    '',
  ].join('\n')
}

const run = (c: Composition, args: object) => c.ctx.tools.execute({
  callId: 'c1', name: 'bash', arguments: JSON.stringify(args), signal: new AbortController().signal, context: { cwd: dir },
})

describe('@rein/tool-bash in a cordis.yml', () => {
  it('loads by name with its Config, runs a command, and goes when its row is removed', async () => {
    const file = join(dir, 'cordis.yml')
    writeFileSync(file, yml(['defaultTimeoutMs: 300', "deny: ['rm -rf *']", 'env: { GREETING: hello }']))
    composition = await loadComposition({ file, resolveFrom: packageDir })
    expect(composition.ctx.tools.list()).toEqual(['bash'])
    const result = await run(composition, { command: 'echo "$GREETING from $PWD"; sleep 5', description: 'Greet' })
    expect(result.content).toEqual([{ type: 'text', text: `hello from ${dir}\n[timed out after 300 ms]\n[killed by signal SIGTERM]` }])
    const denied = await run(composition, { command: 'rm -rf /tmp/x', description: 'Delete' })
    expect(denied.isError && denied.error.code).toBe('COMMAND_DENIED')
    writeFileSync(file, readFileSync(file, 'utf8').replace(/- id: bash[\s\S]*$/, ''))
    await composition.reload()
    expect(composition.ctx.tools.list()).toEqual([])
    expect(composition.ctx.get('shell')).toBeUndefined()
  })

  it('fails the load, naming the row and the field, on a bad Config value', async () => {
    const file = join(dir, 'cordis.yml')
    writeFileSync(file, yml(['maxTimeoutMs: soon']))
    await expect(loadComposition({ file, resolveFrom: packageDir })).rejects.toThrow('row "bash" (@rein/tool-bash): config.maxTimeoutMs:')
  })

  it('fails the load when the default timeout is above the maximum', async () => {
    const file = join(dir, 'cordis.yml')
    writeFileSync(file, yml(['defaultTimeoutMs: 700000']))
    await expect(loadComposition({ file, resolveFrom: packageDir })).rejects.toThrow('config.defaultTimeoutMs (700000) is above config.maxTimeoutMs (600000)')
  })
})
