/**
 * Real processes, real SIGKILL, sessions in JSONL files: a background job runs a child agent on a
 * session below its owner's (its `ref`, as @rein/subagents passes it), and rein is killed before
 * the owner's log records the job's end. Resuming the owner reads the child's log: a child that
 * finished is the job's end, with its answer; only one that did not is lost.
 */

import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { killWhenPrinted } from '@rein/testkit'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { LostJob } from '../src/index.ts'
import { bootChildStack, CANCELLED_TASK, CHILD_ANSWER, EARLIER_TASK, FAILING_TASK, FINISHING_TASK, HANGING_TASK } from './fixtures/child-stack.ts'
import { notices, ofType, ownerOf } from './harness.ts'

const fixture = fileURLToPath(new URL('./fixtures/child-crash.ts', import.meta.url))
const repo = fileURLToPath(new URL('../../../../', import.meta.url))

const dirs: string[] = []
const spawned: ChildProcess[] = []
/** The resumed stacks' jobs plugins, disposed after each test. */
const fibers: { dispose(): unknown }[] = []
afterEach(async () => {
  for (const child of spawned.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  await Promise.all(fibers.splice(0).map((fiber) => fiber.dispose()))
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** Runs the fixture until it prints `marker`, then kills it with SIGKILL. */
async function killAt(marker: string, sessions: string, parentId: string, childTask: string): Promise<void> {
  const child = spawn(process.execPath, ['--conditions=@rein/source', '--import', 'tsx', fixture, sessions, parentId, childTask], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] })
  spawned.push(child)
  await killWhenPrinted(child, marker)
}

/** Kills the fixture at `marker`; the sessions folder and the owner's session id. */
async function crash(marker: string, childTask: string) {
  const home = mkdtempSync(join(tmpdir(), 'rein-jobs-child-crash-'))
  dirs.push(home)
  const sessions = join(home, 'sessions')
  const parentId = `parent-${Math.random().toString(36).slice(2, 10)}`
  await killAt(marker, sessions, parentId, childTask)
  return { sessions, parentId }
}

/** Resumes the owner in a new stack and reaps it, without waiting for anything; `jobs/lost` events are collected. */
async function resume(sessions: string, parentId: string, childTask: string) {
  const stack = await bootChildStack({ root: sessions, childTask })
  fibers.push(stack.jobs)
  const lost: LostJob[] = []
  stack.root.on('jobs/lost', (job) => { lost.push(job) })
  const { agent } = await stack.root.agents.resume(parentId)
  stack.root.jobs.reap(parentId)
  return { ...stack, agent, lost }
}

/** Kills the fixture at `marker`, then resumes the owner here and lets jobs reap it, until the job's end is logged. */
async function crashAndResume(marker: string, childTask: string) {
  const { sessions, parentId } = await crash(marker, childTask)
  const resumed = await resume(sessions, parentId, childTask)
  await vi.waitFor(() => expect(ofType(resumed.agent.session.events, 'jobs/end')).toHaveLength(1))
  return resumed
}

describe('a background job whose rein process was killed before its end was recorded', () => {
  it('reads done, with the child\'s answer, when its child session shows a completed run (not lost)', async () => {
    const { agent, llm, lost } = await crashAndResume('child-done', FINISHING_TASK)
    expect(ofType(agent.session.events, 'jobs/end')).toEqual([expect.objectContaining({ jobId: 'subagent-1', status: 'done', notice: true, result: expect.stringContaining(CHILD_ANSWER) })])
    // Its producer is told all the same, before the child's log is read: a finished child's log is complete, so tidying it changes nothing.
    expect(lost).toMatchObject([{ jobId: 'subagent-1', kind: 'subagent' }])
    await agent.send('What did it find?')
    expect(notices(llm.requests[0]!.messages)).toEqual([
      'Background job subagent-1 (dig) finished. Its result was kept: read it with job_output. [status: done]',
    ])
    // job_output gives the answer, read from the child's log.
    const result = llm.requests[1]!.messages.at(-1)!.content.find((block) => block.type === 'tool-result')
    expect(result).toMatchObject({ toolCallId: 'c2', content: [{ type: 'text', text: expect.stringMatching(
      /^\(subagent-1 belonged to an earlier run of this session: its result was kept\)\nIts session [\w-]+ recorded this answer:\nFound it under the third stone\.\n\[status: done\]$/,
    ) }] })
    await agent.close()
  })

  it('still reads lost when its child session ended mid-run', async () => {
    const { agent, llm, lost } = await crashAndResume('child-running', HANGING_TASK)
    expect(ofType(agent.session.events, 'jobs/end')).toEqual([{ jobId: 'subagent-1', status: 'killed', cause: 'lost', notice: true }])
    expect(lost).toMatchObject([{ jobId: 'subagent-1', kind: 'subagent' }])
    await agent.send('What did it find?')
    expect(notices(llm.requests[0]!.messages)).toEqual([
      'Background job subagent-1 (dig) was lost: the rein process running it ended without recording how it ended, and any of its processes still running were stopped. [status: killed]',
    ])
    await agent.close()
  })

  it('job_output, job_kill and wait answer with the child\'s end, not killed, while its child session is still being read', async () => {
    const { sessions, parentId } = await crash('child-done', FINISHING_TASK)
    const { root, agent } = await resume(sessions, parentId, FINISHING_TASK)
    const context = { identity: ownerOf(agent), sessionId: agent.session.id }
    const run = (name: string) => root.tools.execute({ callId: 'c', name, arguments: JSON.stringify({ job_id: 'subagent-1' }), signal: new AbortController().signal, context })
    // Asked at once after reap: the child's log is not read yet.
    const [output, killed, waited] = await Promise.all([run('job_output'), run('job_kill'), root.jobs.wait('subagent-1', 0, ownerOf(agent))])
    expect(output.content).toEqual([{ type: 'text', text: expect.stringMatching(/its result was kept\)\nIts session [\w-]+ recorded this answer:\nFound it under the third stone\.\n\[status: done\]$/) }])
    expect(killed.content).toEqual([{ type: 'text', text: 'subagent-1 (dig) had already ended.\n[status: done]' }])
    expect(waited).toMatchObject({ status: 'done', earlier: true })
    await agent.close()
  })

  it('reads lost, not failed, when its child\'s run was cancelled (aborted: a kill, the owner\'s close or a time limit)', async () => {
    const { agent, llm } = await crashAndResume('child-done', CANCELLED_TASK)
    expect(ofType(agent.session.events, 'jobs/end')).toEqual([{ jobId: 'subagent-1', status: 'killed', cause: 'lost', notice: true }])
    await agent.send('What did it find?')
    expect(notices(llm.requests[0]!.messages)).toEqual([
      'Background job subagent-1 (dig) was lost: the rein process running it ended without recording how it ended, and any of its processes still running were stopped. [status: killed]',
    ])
    await agent.close()
  })

  it('reads failed, with the child\'s error, when its child\'s run ended with an error', async () => {
    const { agent } = await crashAndResume('child-done', FAILING_TASK)
    expect(ofType(agent.session.events, 'jobs/end')).toEqual([{
      jobId: 'subagent-1', status: 'failed', notice: true,
      error: expect.stringMatching(/^its session [\w-]+ recorded its run ending error: \w+: .*no scripted answer/),
    }])
    await agent.close()
  })

  it('reads lost when its child\'s last run predates the job (a resumed child whose new run never began)', async () => {
    const { agent } = await crashAndResume('child-idle', EARLIER_TASK)
    expect(ofType(agent.session.events, 'jobs/end')).toEqual([{ jobId: 'subagent-1', status: 'killed', cause: 'lost', notice: true }])
    await agent.close()
  })

  it('logs no end when jobs is unloaded right after reap, and a later process reaps it to done', async () => {
    const { sessions, parentId } = await crash('child-done', FINISHING_TASK)
    const first = await resume(sessions, parentId, FINISHING_TASK)
    await first.jobs.dispose()
    await first.agent.close()
    expect(ofType(first.agent.session.events, 'jobs/end')).toEqual([])
    const { agent } = await resume(sessions, parentId, FINISHING_TASK)
    await vi.waitFor(() => expect(ofType(agent.session.events, 'jobs/end')).toHaveLength(1))
    expect(ofType(agent.session.events, 'jobs/end')).toEqual([expect.objectContaining({ jobId: 'subagent-1', status: 'done', result: expect.stringContaining(CHILD_ANSWER) })])
    await agent.close()
  })
})
