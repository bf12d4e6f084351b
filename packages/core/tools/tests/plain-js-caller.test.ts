// `ctx.tools.execute` from plain JavaScript, where nothing checks the input's type: a call without
// a `signal` threw a TypeError from deep inside the pipeline (`reading 'aborted'`), though execute
// promises never to reject. Without one the call runs and cannot be cancelled; a value that is not
// an AbortSignal (an AbortController, say) is a result saying what to pass.
import { describe, expect, it } from 'vitest'
import { defineTool, type ApprovalRequest, type ExecuteInput, type ToolRun } from '../src/index.ts'
import { call, createRegistry, echo } from './fixtures.ts'

/** The input a plain-JS caller builds: `signal` left out, or anything at all. */
function untyped(input: Omit<ExecuteInput, 'signal'> & { signal?: unknown }): ExecuteInput {
  return input as ExecuteInput
}

describe('execute called without a signal', () => {
  it('runs the call, which cannot be cancelled', async () => {
    const { tools } = await createRegistry()
    tools.register(echo)
    const { signal: _, ...input } = call('echo', { text: 'hi' })
    expect(await tools.execute(untyped(input))).toMatchObject({ isError: false, value: { text: 'hi' } })
    expect(await tools.execute(untyped({ ...input, signal: undefined }))).toMatchObject({ isError: false })
    expect(await tools.execute(untyped({ ...input, signal: null }))).toMatchObject({ isError: false })
  })

  it('gives a body that reads run.signal one that never aborts, and wrappers and approvals a signal too', async () => {
    const { tools } = await createRegistry()
    let seen: AbortSignal | undefined
    tools.register(defineTool({
      name: 'listens',
      description: 'Reads its signal.',
      parameters: {},
      effects: ['write'],
      output: { schema: { type: 'string' }, render: (_args, value) => value },
      execute: async (_args, run: ToolRun) => {
        seen = run.signal
        await new Promise((resolve) => setImmediate(resolve))
        return 'done'
      },
    }))
    const wrapped: boolean[] = []
    tools.wrapExecute((current, next) => {
      wrapped.push(current.signal instanceof AbortSignal && !current.signal.aborted)
      return next()
    })
    const asked: boolean[] = []
    const approval = { request: async (request: ApprovalRequest) => { asked.push(request.signal instanceof AbortSignal); return 'allow' as const } }
    const { signal: _, ...input } = call('listens', {}, { approval: () => approval })
    expect(await tools.execute(untyped(input))).toMatchObject({ isError: false, value: 'done' })
    expect(seen).toBeInstanceOf(AbortSignal)
    expect(seen!.aborted).toBe(false)
    expect(wrapped).toEqual([true])
    expect(asked).toEqual([true])
  })

  it('answers a signal that is not an AbortSignal with a result naming what to pass, never a throw', async () => {
    const { tools } = await createRegistry()
    const observed: string[] = []
    tools.onResult((request, result) => { observed.push(`${request.callId} ${result.isError ? result.error.code : 'ok'}`) })
    let ran = false
    tools.register(defineTool({ name: 'count', description: 'Counts.', parameters: {}, output: { schema: { type: 'string' }, render: (_args, value) => value }, execute: () => { ran = true; return 'ran' } }))
    const { signal: _, ...input } = call('count', {})
    const controller = untyped({ ...input, signal: new AbortController() })
    const result = await tools.execute(controller)
    expect(result).toMatchObject({ isError: true, error: { code: 'INVALID_SIGNAL' } })
    expect(result.isError && result.error.message).toMatch(/AbortController.*\.signal/)
    expect((await tools.execute(untyped({ ...input, signal: { aborted: false } }))).isError && 'refused').toBe('refused')
    expect(ran).toBe(false)
    // Observers see every result, this one too.
    expect(observed).toEqual(['call-1 INVALID_SIGNAL', 'call-1 INVALID_SIGNAL'])
  })
})
