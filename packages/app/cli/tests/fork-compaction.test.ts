// A fork drops bookkeeping events no loaded plugin defines, so its seqs differ from the original's:
// a compaction copied into it must still name the same messages.
import { Context } from '@deepseek-ai/cordis'
import { assistantMessage, userMessage, type Message } from '@rein/llm'
import SessionService, { deriveMessages, MemorySessionStore, type Session } from '@rein/session'
import { describe, expect, it } from 'vitest'
import { forkSession } from '../src/rewind/fork.ts'

describe('a fork of a compacted session', () => {
  /** Four turns, a bookkeeping event no loaded plugin defines in each; `compact` adds the compaction. */
  async function forked(compact: (original: Session) => void) {
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
    compact(original)
    await undefine()
    const report = await forkSession(ctx, original.header, original.events, original.events.length)
    expect(report.dropped).toBe(4)
    const fork = await ctx.sessions.load(report.sessionId)
    return { original, fork }
  }

  // Ids name events by seq, which differ; what the model reads must not.
  const seen = (messages: readonly Message[]) => messages.map(({ role, content, source }) => ({ role, content, source }))

  it('shows the model other messages than the original did when the summarized range keeps its old seqs', async () => {
    const { original, fork } = await forked((session) => {
      // Turns 2 and 3 summarized.
      const fromSeq = session.events.find((event) => event.type === 'assistant/message')!.seq
      const toSeq = session.events.filter((event) => event.type === 'turn/end')[2]!.seq
      session.append('context/compacted', { reason: 'manual', tokensBefore: 100, tokensAfter: 50, pruned: [], summary: { text: 'Turns 1 to 3.', fromSeq, toSeq, provider: 'p', model: 'm' } })
    })
    expect(seen(deriveMessages(fork.events))).toEqual(seen(original.messages()))
  })

  it('summarizes the message the original kept word for word when the kept one keeps its old seq', async () => {
    const { original, fork } = await forked((session) => {
      // From turn 1's answer into turn 4, whose request stays word for word.
      const fromSeq = session.events.find((event) => event.type === 'assistant/message')!.seq
      const asks = session.events.filter((event) => event.type === 'user/message')
      const toSeq = asks[3]!.seq
      session.append('context/compacted', { reason: 'auto', tokensBefore: 100, tokensAfter: 50, pruned: [], summary: { text: 'Turns 1 to 4.', fromSeq, toSeq, keptSeq: toSeq, provider: 'p', model: 'm' } })
    })
    expect(original.messages().map((message) => message.content)).toContainEqual([{ type: 'text', text: 'ask 4' }])
    expect(seen(deriveMessages(fork.events))).toEqual(seen(original.messages()))
  })

  it('summarizes the next turn\'s request too when the range ends at a bookkeeping event the fork drops', async () => {
    const { original, fork } = await forked((session) => {
      // Up to turn 4's start, as a compaction names it: the event before its request, here bookkeeping.
      const fromSeq = session.events.find((event) => event.type === 'assistant/message')!.seq
      const toSeq = session.events.filter((event) => event.type === 'user/message')[3]!.seq - 1
      expect(session.events[toSeq]!.type).toBe('plugin/bookkeeping')
      session.append('context/compacted', { reason: 'auto', tokensBefore: 100, tokensAfter: 50, pruned: [], summary: { text: 'Turns 1 to 3.', fromSeq, toSeq, provider: 'p', model: 'm' } })
    })
    expect(original.messages().map((message) => message.content)).toContainEqual([{ type: 'text', text: 'ask 4' }])
    expect(seen(deriveMessages(fork.events))).toEqual(seen(original.messages()))
  })
})
