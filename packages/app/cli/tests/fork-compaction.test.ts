// A fork drops bookkeeping events no loaded plugin defines, so its seqs differ from the original's:
// a compaction copied into it must still name the same messages.
import { Context } from '@deepseek-ai/cordis'
import { assistantMessage, userMessage, type Message } from '@rein/llm'
import SessionService, { deriveMessages, MemorySessionStore } from '@rein/session'
import { describe, expect, it } from 'vitest'
import { forkSession } from '../src/rewind/fork.ts'

describe('a fork of a compacted session', () => {
  it('shows the model other messages than the original did when the summarized range keeps its old seqs', async () => {
    const ctx = new Context()
    await ctx.plugin(SessionService)
    await ctx.inject(['sessions'], (inner) => { inner.sessions.registerStore(new MemorySessionStore()) })
    const original = await ctx.sessions.create({ id: 'original', cwd: '/w' })
    const said = (n: number) => assistantMessage([{ type: 'text', text: `answer ${n}` }], { kind: 'model', provider: 'p', model: 'm' })
    const undefine = ctx.sessions.defineEvent('plugin/bookkeeping', { ignorable: true })
    for (let turn = 1; turn <= 4; turn++) {
      original.append('turn/start', { turn })
      original.append('plugin/bookkeeping', { turn }, { ignorable: true })
      original.append('user/message', { message: userMessage(`ask ${turn}`) })
      original.append('assistant/message', { message: said(turn), provider: 'p', model: 'm' })
      original.append('turn/end', { turn, reason: 'completed' })
    }
    // Turns 2 and 3 summarized.
    const fromSeq = original.events.find((event) => event.type === 'assistant/message')!.seq
    const toSeq = original.events.filter((event) => event.type === 'turn/end')[2]!.seq
    original.append('context/compacted', { reason: 'manual', tokensBefore: 100, tokensAfter: 50, pruned: [], summary: { text: 'Turns 1 to 3.', fromSeq, toSeq, provider: 'p', model: 'm' } })
    await undefine()
    const report = await forkSession(ctx, original.header, original.events, original.events.length)
    expect(report.dropped).toBe(4)
    const fork = await ctx.sessions.load(report.sessionId)
    // Ids name events by seq, which differ; what the model reads must not.
    const seen = (messages: readonly Message[]) => messages.map(({ role, content, source }) => ({ role, content, source }))
    expect(seen(deriveMessages(fork.events))).toEqual(seen(original.messages()))
  })
})
