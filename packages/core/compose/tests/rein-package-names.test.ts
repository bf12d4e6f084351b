import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { REIN_PACKAGES } from '../src/rein-packages.ts'
import { useComposition } from './harness.ts'

const { writeConfig, failure } = useComposition()

describe('a row naming a missing @rein/* package', () => {
  it('a misspelt @rein/ name gets "did you mean" the rein package, not npm install advice', async () => {
    const { problems } = await failure(writeConfig("- id: tools\n  name: '@rein/tool'\n"))
    expect(problems).toEqual([expect.stringMatching(/^row "tools" \(@rein\/tool\): cannot load the plugin: Cannot find package '@rein\/tool' .*; @rein\/tool is not one of rein's plugin packages: did you mean @rein\/tools\?$/)])
    expect(String(problems)).not.toContain('npm install')
  })

  it('an @rein/ name close to none of rein\'s packages says it is none of them, without npm install advice', async () => {
    const { problems } = await failure(writeConfig("- id: x\n  name: '@rein/quantum-flux'\n"))
    expect(problems).toEqual([expect.stringMatching(/; @rein\/quantum-flux is not one of rein's plugin packages \(@rein\/agent, .*@rein\/tools\)$/)])
    expect(String(problems)).not.toContain('npm install')
  })

  it('@rein/nope suggests no library (@rein/base is not a plugin a row could load)', async () => {
    const { problems } = await failure(writeConfig("- id: x\n  name: '@rein/nope'\n"))
    expect(String(problems)).not.toContain('did you mean')
    expect(problems).toEqual([expect.stringMatching(/; @rein\/nope is not one of rein's plugin packages \(@rein\/agent, .*@rein\/tools\)$/)])
    expect(String(problems)).not.toMatch(/@rein\/(base|compose|cli|testkit)\b/)
  })

  it('@rein/openai suggests @rein/llm-openai, which has the word as a part, not @rein/agent', async () => {
    const { problems } = await failure(writeConfig("- id: x\n  name: '@rein/openai'\n"))
    expect(problems).toEqual([expect.stringMatching(/; @rein\/openai is not one of rein's plugin packages: did you mean @rein\/llm-openai\?$/)])
  })

  it('@rein/agents suggests @rein/agent, one letter off, not @rein/subagents, whose name merely contains it', async () => {
    const { problems } = await failure(writeConfig("- id: x\n  name: '@rein/agents'\n"))
    expect(problems).toEqual([expect.stringMatching(/did you mean @rein\/agent\?$/)])
  })

  it('a rein library named as a row is said to be no plugin', async () => {
    const { problems } = await failure(writeConfig("- id: x\n  name: '@rein/bse'\n"))
    expect(String(problems)).not.toContain('@rein/base?')
  })

  it('a rein package not installed beside the file is to be installed from its packed tarball, not from npm', async () => {
    const { problems } = await failure(writeConfig("- id: openai\n  name: '@rein/llm-openai'\n"))
    expect(problems).toEqual([expect.stringMatching(/; is it installed\? rein's packages are not on npm: run pnpm pack:all in the rein repository and npm install its dist-packages\/rein-llm-openai-\*\.tgz in that file's folder$/)])
    expect(String(problems)).not.toMatch(/npm install @rein/)
  })

  it('@Rein/Tools, in capitals, gets @rein/tools, not npm install of a name npm refuses', async () => {
    const { problems } = await failure(writeConfig("- id: x\n  name: '@Rein/Tools'\n"))
    expect(problems).toEqual([expect.stringMatching(/; @Rein\/Tools is not one of rein's plugin packages: did you mean @rein\/tools\?$/)])
    expect(String(problems)).not.toContain('npm install')
  })

  it('rein/tools, without the @, gets @rein/tools, not a bare "Cannot find package \'rein\'"', async () => {
    const { problems } = await failure(writeConfig("- id: x\n  name: rein/tools\n"))
    expect(problems).toEqual([expect.stringMatching(/Cannot find package 'rein' .*; rein\/tools is not one of rein's plugin packages: did you mean @rein\/tools\?$/)])
  })

  it('a subpath of a rein package that is not installed gets the install advice of its package', async () => {
    const { problems } = await failure(writeConfig("- id: approval\n  name: '@rein/tools/approval'\n"))
    expect(problems).toEqual([expect.stringMatching(/Cannot find package '@rein\/tools' .*; is it installed\? rein's packages are not on npm: run pnpm pack:all in the rein repository and npm install its dist-packages\/rein-tools-\*\.tgz in that file's folder$/)])
  })

  it('a package name with a space at its end says so, rather than that the package is missing', async () => {
    const { problems } = await failure(writeConfig("- id: x\n  name: '@rein/tools '\n"))
    expect(problems).toEqual(['row "x": name has spaces at its start or end ("@rein/tools "): remove them'])
  })

  it('lists every package of the workspace as one of rein\'s', () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url))
    const names = readdirSync(root).flatMap((group) => readdirSync(`${root}${group}`).map((name) => (JSON.parse(readFileSync(`${root}${group}/${name}/package.json`, 'utf8')) as { name: string }).name))
    expect([...REIN_PACKAGES].sort()).toEqual(names.sort())
  })
})
