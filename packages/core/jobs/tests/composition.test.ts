// Loads @rein/jobs from a cordis.yml by package name, as a user's project does, and takes it out again.
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { useCordisYml } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'

const yml = useCordisYml(afterEach, fileURLToPath(new URL('..', import.meta.url)))

function write(jobsConfig: string) {
  return yml.write([
    '- id: tools',
    "  name: '@rein/tools'",
    '- id: sessions',
    "  name: '@rein/session'",
    '- id: jobs',
    "  name: '@rein/jobs'",
    ...(jobsConfig ? ['  config:', ...jobsConfig.split('\n').map((line) => `    ${line}`)] : []),
  ])
}

describe('@rein/jobs in a cordis.yml', () => {
  it('provides ctx.jobs and the job tools, with its Config, and takes them away with its row', async () => {
    const file = write('bufferChars: 2000\nmaxWaitMs: 30000')
    const composition = await yml.load(file)
    const { ctx } = composition
    expect(ctx.tools.list()).toEqual(['job_kill', 'job_list', 'job_output'])
    const description = ctx.tools.schemas().find((schema) => schema.name === 'job_output')!.description
    expect(description).toContain('beyond 2,000 characters')
    expect(ctx.jobs.list({ sessionId: 'none' })).toEqual([])
    writeFileSync(file, [
      '- id: tools',
      "  name: '@rein/tools'",
      '- id: sessions',
      "  name: '@rein/session'",
      '',
    ].join('\n'))
    await composition.reload()
    expect(ctx.tools.list()).toEqual([])
    expect(ctx.get('jobs')).toBeUndefined()
  })

  it('fails the load, naming the row and the field, on a bad config value', async () => {
    const file = write('bufferChars: lots')
    await expect(yml.load(file)).rejects.toThrow('row "jobs" (@rein/jobs): config.bufferChars:')
  })
})
