// rein killed with SIGKILL during a foreground call: nothing in rein runs to stop the command, so
// the next process, repairing the session, asks the tool to recover the call — and the tool finds
// the command's processes by the marker derived from the session and the call, and stops them.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { once } from 'node:events'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { format } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { bootBash, text } from './helpers.ts'
import { livingWith, uniqueTag, waitFor } from './processes.ts'

const fixture = fileURLToPath(new URL('./fixtures/killed-mid-call.ts', import.meta.url))
const repo = fileURLToPath(new URL('../../../../', import.meta.url))

// Whatever a failing test leaves running is killed here, never left on the machine.
const tags: string[] = []
afterEach(() => {
  for (const tag of tags.splice(0)) {
    for (const pid of livingWith(tag)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
  }
})

/** The environment entry a call's processes carry: `REIN_BASH_CALL=` + 32 hex of sha256("<session>/<call>"). */
const markerOf = (sessionId: string, callId: string) => `REIN_BASH_CALL=${createHash('sha256').update(`${sessionId}/${callId}`).digest('hex').slice(0, 32)}`

describe('a foreground call cut off by kill -9', () => {
  it('leaves no process running once the next process recovers the call, and says the command was cut off', async () => {
    const tag = uniqueTag()
    tags.push(tag)
    const sessionId = `session-${tag}`
    const callId = `call_${tag}`
    const marker = markerOf(sessionId, callId)
    tags.push(marker)
    // A stray that left the group, and a process that ignores SIGTERM (SIGKILL after the grace).
    const command = `setsid sleep ${tag} & trap '' TERM; sleep ${tag}`
    const rein = spawn(process.execPath, ['--import', 'tsx', '--conditions=@rein/source', fixture, sessionId, callId, command], { cwd: repo, stdio: 'ignore' })
    const exited = once(rein, 'exit')
    await waitFor(() => livingWith(marker).length >= 2, 'the command to run with the call\'s marker')
    rein.kill('SIGKILL')
    await exited
    // Orphaned: rein is gone, its command is not.
    expect(livingWith(marker).length).toBeGreaterThan(0)

    const { root } = await bootBash({ killGraceMs: 200 })
    const logged: string[] = []
    root.logger.exporter({ export: (message) => { logged.push(format(...message.args)) } })
    const recovered = await root.tools.recover({
      callId, name: 'bash', arguments: JSON.stringify({ command, description: 'Wait' }),
      signal: new AbortController().signal, context: { sessionId },
    })
    // It was still running, so it did not finish: the model is told so, not that the outcome is unknown.
    expect(recovered).toMatchObject({ error: { code: 'COMMAND_INTERRUPTED' } })
    expect(recovered && 'error' in recovered ? recovered.error.message : '').toMatch(/^the command's processes were still running when rein was stopped \(killed\): \d+ process(es)? stopped now, so it was most likely cut off before it finished\. What it did before that is in the workspace; check before running it again$/)
    expect(livingWith(marker)).toEqual([])
    expect(livingWith(tag)).toEqual([])
    expect(logged.join('\n')).toMatch(/stopped \d+ process/)
  }, 30_000)
})

describe('the call marker', () => {
  it('does not let a call that reuses a running call\'s id stop that call\'s processes when it ends', async () => {
    const { execute } = await bootBash()
    const dir = mkdtempSync(join(tmpdir(), 'rein-bash-marker-'))
    const tag = uniqueTag()
    tags.push(tag)
    try {
      const context = { sessionId: 'session-reused', callId: 'call_reused' }
      const first = execute({ command: `sleep ${tag} & while [ ! -e ${dir}/go ]; do sleep 0.05; done; kill %1; wait; echo first done`, description: 'Wait' }, undefined, context)
      await waitFor(() => livingWith(tag).length > 0, 'the first call to run')
      // Same session, same call id: were the marker the same, this call's end would stop the first's processes.
      expect(text(await execute({ command: 'echo second', description: 'Echo' }, undefined, context))).toBe('second\n[exit code: 0]')
      writeFileSync(join(dir, 'go'), '')
      expect(text(await first)).toBe('first done\n[exit code: 0]')
      expect(existsSync(join(dir, 'go'))).toBe(true)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
