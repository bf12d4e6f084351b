/** A plugin that registers an in-memory store: sessions vanish with the process. For tests and demos. */

import type { Context } from '@deepseek-ai/cordis'
import { MemorySessionStore } from './memory-store.ts'

export const sessionMemory = {
  name: 'session-memory',
  inject: ['sessions'],
  apply: (ctx: Context) => {
    ctx.sessions.registerStore(new MemorySessionStore())
  },
}
