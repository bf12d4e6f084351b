// What a tool leaves behind never outlives the command, nor reaches rein's stdout: a tool that
// ignores its signal while a timer of its own runs does not keep rein from exiting, and what a tool
// writes to stdout goes to stderr, so `rein run --json` stays JSON and a plain run's answer stays the answer.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ChildProcessByStdio } from 'node:child_process'
import type { Readable } from 'node:stream'
import type { MockReply } from '@rein/testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { projectPerTest, rein, spawnRein, terminalRein, type Project } from './harness.ts'

const setUp = projectPerTest(afterEach)
const LEFT_RUNNING = 'rein: a tool or plugin left work running after the command ended; exiting'

function calls(tool: string, answer: string): MockReply[] {
  return [{ steps: [{ toolCall: { id: 'c1', name: tool, arguments: '{}' } }] }, { steps: [{ text: answer }] }]
}

/** Tool calls time out after 300 ms: `ticking` never finishes. */
function shortTimeout(p: Project): void {
  const file = join(p.dir, 'cordis.yml')
  writeFileSync(file, readFileSync(file, 'utf8').replace("name: '@rein/tools'", "name: '@rein/tools'\n  config: { defaultTimeoutMs: 300 }"))
}

/** Kills the child if it is still there after 20 s: the symptom is a process that never ends. */
function killIfStillThere(): { onSpawn: (child: ChildProcessByStdio<null, Readable, Readable>) => void; clear: () => void } {
  let timer: NodeJS.Timeout | undefined
  return {
    onSpawn: (child) => { timer = setTimeout(() => child.kill('SIGKILL'), 20_000) },
    clear: () => clearTimeout(timer),
  }
}

describe('a tool that ignores its signal and leaves a timer running', () => {
  it('does not keep rein run from exiting once the call timed out: the answer, a line saying so, and exit 0', async () => {
    const p = await setUp(calls('ticking', 'The tool timed out.'))
    shortTimeout(p)
    const guard = killIfStillThere()
    const run = await spawnRein(p.dir, ['run', 'tick'], undefined, {}, [], guard.onSpawn)
    guard.clear()
    expect(run.signal).toBeNull()
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('The tool timed out.')
    expect(run.stderr).toContain('[tool] ticking {} failed TOOL_TIMEOUT')
    expect(run.stderr).toContain(`${LEFT_RUNNING}\n`)
  }, 30_000)

  it('does not keep rein run from exiting after Ctrl-C stopped the turn: the session saved, a line saying so, and exit 130', async () => {
    const p = await setUp(calls('ticking', 'never'))
    const guard = killIfStillThere()
    let started = false
    const run = await spawnRein(p.dir, ['run', 'tick'], undefined, { REIN_HOME: p.home }, [], (child) => {
      guard.onSpawn(child)
      const poll = setInterval(() => {
        if (started || !existsSync(join(p.dir, 'ticking.txt'))) return
        started = true
        clearInterval(poll)
        child.kill('SIGINT')
      }, 20)
    })
    guard.clear()
    expect(run.signal).toBeNull()
    expect(run.code).toBe(130)
    expect(run.stderr).toMatch(/· cancelled\n/)
    expect(run.stderr).toContain(`${LEFT_RUNNING}\n`)
    expect((await rein(p.dir, ['sessions'], { env: { REIN_HOME: p.home } })).stdout).toContain('cancelled')
  }, 30_000)

  it('does not keep rein chat from exiting after Ctrl-D', async () => {
    const p = await setUp(calls('ticking', 'The tool timed out.'))
    shortTimeout(p)
    const chat = terminalRein(p.dir, ['chat'])
    const guard = setTimeout(() => chat.kill(), 25_000)
    try {
      await expect.poll(chat.screen, { timeout: 15_000 }).toContain('Ctrl-D leaves')
      chat.type('tick\r')
      await expect.poll(chat.screen, { timeout: 10_000 }).toContain('The tool timed out.')
      chat.type('\u0004')
      expect(await chat.done).toBe(0)
      expect(chat.screen()).toContain(LEFT_RUNNING)
    } finally {
      clearTimeout(guard)
      chat.kill()
    }
  }, 40_000)

  it('a run whose tools leave nothing running exits without that line', async () => {
    const p = await setUp(calls('lookup', 'Looked it up.'))
    const run = await spawnRein(p.dir, ['run', 'look'])
    expect(run.code).toBe(0)
    expect(run.stderr).not.toContain(LEFT_RUNNING)
  })
})

function isJson(line: string): boolean {
  try {
    JSON.parse(line)
    return true
  } catch {
    return false
  }
}

describe('a tool writing to stdout', () => {
  it('does not corrupt rein run --json: every stdout line is JSON, the tool\'s output is on stderr', async () => {
    const p = await setUp(calls('noisy', 'Noise made.'))
    const run = await spawnRein(p.dir, ['run', '--json', 'make noise'])
    expect(run.code).toBe(0)
    const lines = run.stdout.split('\n').filter(Boolean)
    expect(lines.filter((line) => !isJson(line))).toEqual([])
    expect(lines.map((line) => (JSON.parse(line) as { type: string }).type)).toContain('result')
    for (const text of ['NOISY log', 'NOISY info', 'NOISY debug', "noisy: 'dir'", 'table', 'NOISY raw write', 'NOISY error']) expect(run.stderr).toContain(text)
  })

  it('does not mix into the answer of a plain rein run', async () => {
    const p = await setUp(calls('noisy', 'Noise made.'))
    const run = await spawnRein(p.dir, ['run', 'make noise'])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('Noise made.\n')
    expect(run.stderr).toContain('NOISY raw write')
  })
})

describe('rein writing to a reader slower than it', () => {
  it('sends all of a long answer to a pipe that is read late, without the left-running line', async () => {
    const answer = `${'long answer '.repeat(200_000)}end.`
    const p = await setUp([{ steps: [{ text: answer }] }])
    const guard = killIfStillThere()
    const run = await spawnRein(p.dir, ['run', 'say it all'], undefined, {}, [], (child) => {
      guard.onSpawn(child)
      // The reader takes nothing for longer than the grace: rein's own output is still on its way.
      child.stdout.pause()
      setTimeout(() => child.stdout.resume(), 3_000)
    })
    guard.clear()
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(answer)
    expect(run.stderr).not.toContain(LEFT_RUNNING)
  }, 30_000)
})

describe('a plugin whose dispose never settles while a timer of its own runs', () => {
  /** A row whose dispose awaits forever with an interval running: the process never falls idle. */
  function stuckOnDispose(p: Project): void {
    writeFileSync(join(p.dir, 'stuck-dispose.mjs'), "export const name = 'stuck-dispose'\nexport const apply = (ctx) => { ctx.effect(() => async () => { setInterval(() => {}, 1000); await new Promise(() => {}) }) }\n")
    const file = join(p.dir, 'cordis.yml')
    writeFileSync(file, `${readFileSync(file, 'utf8')}- id: stuck\n  name: ./stuck-dispose.mjs\n`)
  }

  it('says rein waits on it once the command is done, and the first Ctrl-C leaves it: exit 0 for the completed turn, no word of a turn stopped', async () => {
    const p = await setUp([{ steps: [{ text: 'done' }] }])
    stuckOnDispose(p)
    const guard = killIfStillThere()
    const run = await spawnRein(p.dir, ['run', 'hi'], undefined, { REIN_SLOW_START_MS: '1' }, [], (child) => {
      guard.onSpawn(child)
      let said = ''
      child.stderr.on('data', (chunk: Buffer) => {
        said += chunk.toString()
        if (said.includes('still stopping')) child.kill('SIGINT')
      })
    })
    guard.clear()
    expect(run.signal).toBeNull()
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('done\n')
    expect(run.stderr).toContain('rein: a tool or plugin is still stopping after 1 ms (its dispose has not settled); Ctrl-C leaves it\n')
    expect(run.stderr).not.toContain('the turn is')
  }, 30_000)
})
