// Loads the package by name from a cordis.yml, the way a user's composition does, and takes it
// out again by editing the file.
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Composition } from '@rein/compose'
import { useCordisYml } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'

const cordisYml = useCordisYml(afterEach, fileURLToPath(new URL('..', import.meta.url)))

function yml(bashConfig: string[] = []) {
  return cordisYml.write([
    '- id: tools',
    "  name: '@rein/tools'",
    '  config:',
    '    askFor: []',
    '- id: bash',
    "  name: '@rein/tool-bash'",
    ...(bashConfig.length ? ['  config:', ...bashConfig.map((line) => `    ${line}`)] : []),
  ])
}

const run = (c: Composition, args: object) => c.ctx.tools.execute({
  callId: 'c1', name: 'bash', arguments: JSON.stringify(args), signal: new AbortController().signal, context: { cwd: cordisYml.dir },
})

describe('@rein/tool-bash in a cordis.yml', () => {
  it('loads by name with its Config, runs a command, and goes when its row is removed', async () => {
    const file = yml(['defaultTimeoutMs: 300', "deny: ['rm -rf *']", 'env: { GREETING: hello }'])
    const composition = await cordisYml.load(file)
    expect(composition.ctx.tools.list()).toEqual(['bash'])
    const result = await run(composition, { command: 'echo "$GREETING from $PWD"; sleep 5', description: 'Greet' })
    expect(result.content).toEqual([{ type: 'text', text: `hello from ${cordisYml.dir}\n[timed out after 300 ms]\n[killed by signal SIGTERM]` }])
    const denied = await run(composition, { command: 'rm -rf /tmp/x', description: 'Delete' })
    expect(denied.isError && denied.error.code).toBe('COMMAND_DENIED')
    writeFileSync(file, readFileSync(file, 'utf8').replace(/- id: bash[\s\S]*$/, ''))
    await composition.reload()
    expect(composition.ctx.tools.list()).toEqual([])
    expect(composition.ctx.get('shell')).toBeUndefined()
  })

  it('fails the load, naming the row and the field, on a bad Config value', async () => {
    await expect(cordisYml.load(yml(['maxTimeoutMs: soon']))).rejects.toThrow('row "bash" (@rein/tool-bash): config.maxTimeoutMs:')
  })

  it('fails the load when the default timeout is above the maximum', async () => {
    await expect(cordisYml.load(yml(['defaultTimeoutMs: 700000']))).rejects.toThrow('config.defaultTimeoutMs (700000) is above config.maxTimeoutMs (600000)')
  })
})
