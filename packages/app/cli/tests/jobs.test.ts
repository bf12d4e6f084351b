// Background jobs end with the process: `rein run` waits for them, and a process killed while one
// runs leaves it to the next `rein resume`, which stops it and tells the model.
import type { ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { readProcess } from '@rein/base'
import { afterEach, describe, expect, it } from 'vitest'
import type { MockReply } from '@rein/testkit'
import { projectPerTest, rein, sessionIdOf, spawnRein } from './harness.ts'

const setUp = projectPerTest(afterEach)
const JOB_ROWS = ["- { id: jobs, name: '@rein/jobs' }", "- { id: bash, name: '@rein/tool-bash' }"]

function background(command: string): MockReply {
  return { steps: [{ toolCall: { id: 'c_bg', name: 'bash', arguments: JSON.stringify({ command, description: 'background work', run_in_background: true }) } }] }
}

/** Running, not just a zombie nobody waited for (an orphan's new parent here may never reap it). */
const alive = (pid: number) => readProcess(pid) !== undefined

/** A run killed (kill -9) once its turn ended with a background job still running; its log's file name. */
async function killedWithJobRunning() {
  const p = await setUp([
    background('echo $$ > pid.txt; sleep 60'),
    { steps: [{ text: 'Started it.' }] },
    { steps: [{ text: 'It was lost.' }] },
  ], { extraRows: JOB_ROWS })
  const crashed = await spawnRein(p.dir, ['run', '--yes', 'start it'], (text, kill) => { if (text.includes('Started it.')) kill() }, { REIN_HOME: p.home })
  expect(crashed.signal).toBe('SIGKILL')
  const [log] = readdirSync(join(p.home, 'sessions')).filter((name) => name.endsWith('.jsonl'))
  return { p, log }
}

describe('rein run with background jobs', () => {
  it('waits for a running job before it exits, saying so, and records how it ended', async () => {
    const p = await setUp([background('sleep 1; echo late > late.txt'), { steps: [{ text: 'Started it.' }] }], { extraRows: JOB_ROWS })
    const run = await rein(p.dir, ['run', '--yes', 'start the slow work'])
    expect(run.code).toBe(0)
    expect(run.stderr).toContain('waiting for 1 background job (bash-1) to finish')
    // The run returned only after the job had written its file.
    expect(readFileSync(join(p.dir, 'late.txt'), 'utf8')).toBe('late\n')
    const log = readFileSync(join(p.home, 'sessions', `${sessionIdOf(run)}.jsonl`), 'utf8')
    expect(log).toContain('"type":"jobs/end"')
  })

  it('stops a running job at once, as Ctrl-C does, when the reader of stdout went away (rein run … | head)', async () => {
    // The answer keeps coming after the first line, so rein writes to the closed pipe.
    const more = Array.from({ length: 20 }, (_, i) => [{ delayMs: 100 }, { text: `more ${i}\n` }]).flat()
    const p = await setUp([background('echo $$ > pid.txt; sleep 600'), { steps: [{ text: 'first line\n' }, ...more] }], { extraRows: JOB_ROWS })
    const run = await spawnRein(p.dir, ['run', '--yes', 'start it'], (text, _kill, child) => {
      if (text.includes('first line')) child.stdout.destroy()
    }, { REIN_HOME: p.home })
    expect(run.code).toBe(130)
    expect(run.stderr).not.toContain('waiting for 1 background job')
    expect(run.stderr).toContain('stopped bash-1')
    expect(alive(Number(readFileSync(join(p.dir, 'pid.txt'), 'utf8')))).toBe(false)
  }, 30_000)

  it('leaves a job of a killed process to the next resume, which stops it and tells the model it was lost', async () => {
    const { p, log } = await killedWithJobRunning()
    const pid = Number(readFileSync(join(p.dir, 'pid.txt'), 'utf8'))
    expect(alive(pid)).toBe(true)
    const resumed = await spawnRein(p.dir, ['resume', log!.replace('.jsonl', ''), 'what happened?'], undefined, { REIN_HOME: p.home })
    expect(resumed.code).toBe(0)
    expect(alive(pid)).toBe(false)
    const body = p.server.requests.at(-1)?.body as { messages: { role: string; content: string | null }[] } | undefined
    const messages = body?.messages ?? []
    expect(messages.filter((message) => message.role === 'user' && message.content?.includes('bash-1') && message.content.includes('was lost'))).toHaveLength(1)
    expect(existsSync(join(p.dir, 'pid.txt'))).toBe(true)
    // rein show tells a plugin's notice from what the person typed.
    const shown = await spawnRein(p.dir, ['show', log!.replace('.jsonl', '')], undefined, { REIN_HOME: p.home })
    expect(shown.stdout).toMatch(/^\[@rein\/jobs\] Background job bash-1 .* was lost/m)
    expect(shown.stdout).toContain('> what happened?')
    // Three rein processes one after another: on a loaded two-core machine more than the default 5 s.
  }, 30_000)

  it('continues without a new message when the only news is a lost job\'s notice: the model is told, not the person refused', async () => {
    const { p, log } = await killedWithJobRunning()
    const resumed = await spawnRein(p.dir, ['resume', log!.replace('.jsonl', '')], undefined, { REIN_HOME: p.home })
    expect({ code: resumed.code, stderr: resumed.stderr }).toMatchObject({ code: 0, stderr: expect.not.stringContaining('nothing to continue') })
    expect(resumed.stdout).toContain('It was lost.')
    const body = p.server.requests.at(-1)?.body as { messages: { role: string; content: string | null }[] } | undefined
    expect(body?.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/bash-1 .*was lost/) })
  }, 30_000)

  it('still refuses to continue a session that ended cleanly and has no news, without calling the model', async () => {
    const p = await setUp([{ steps: [{ text: 'Done.' }] }], { extraRows: JOB_ROWS })
    const run = await rein(p.dir, ['run', '--yes', 'hello'])
    const resumed = await rein(p.dir, ['resume', sessionIdOf(run)])
    expect({ code: resumed.code, requests: p.server.requests.length }).toEqual({ code: 2, requests: 1 })
    expect(resumed.stderr).toContain('ended cleanly, so there is nothing to continue')
  })
})

describe('a killed process whose job had outgrown its output file', () => {
  it('still tells the model, on resume, that the saved file holds only the start of the output', async () => {
    const rows = ["- { id: jobs, name: '@rein/jobs' }", "- { id: bash, name: '@rein/tool-bash', config: { maxOutputFileBytes: 1024 } }"]
    const p = await setUp([
      background("head -c 5000 /dev/zero | tr '\\0' x; echo; sleep 60"),
      { steps: [{ text: 'Started it.' }] },
      { steps: [{ text: 'It was lost.' }] },
    ], { extraRows: rows })
    const sessions = join(p.home, 'sessions')
    const logText = () => readdirSync(sessions).filter((name) => name.endsWith('.jsonl')).map((name) => readFileSync(join(sessions, name), 'utf8')).join('')
    let child: ChildProcess | undefined
    const running = spawnRein(p.dir, ['run', '--yes', 'start it'], undefined, { REIN_HOME: p.home }, [], (spawned) => { child = spawned })
    // The cut is in the log while the job still runs: killed now, the process never logs the job's end.
    await expect.poll(() => (existsSync(sessions) ? logText() : ''), { timeout: 20_000 }).toContain('only its first 1 KiB')
    expect(logText()).not.toContain('"type":"jobs/end"')
    child!.kill('SIGKILL')
    expect((await running).signal).toBe('SIGKILL')
    const id = readdirSync(sessions).find((name) => name.endsWith('.jsonl'))!.replace('.jsonl', '')
    const resumed = await spawnRein(p.dir, ['resume', id], undefined, { REIN_HOME: p.home })
    expect(resumed.code).toBe(0)
    const body = p.server.requests.at(-1)?.body as { messages: { role: string; content: string | null }[] }
    expect(body.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/bash-1 .*was lost[\s\S]*saved at \S+ \(only its first 1 KiB/) })
  }, 60_000)
})
