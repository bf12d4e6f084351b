/** A plugin that registers an in-memory store: sessions vanish with the process. For tests and demos. */

import type { Context } from '@deepseek-ai/cordis'
import { MemorySessionStore } from './memory-store.ts'

/** A plugin that registers a `MemorySessionStore` on `ctx.sessions`: load it instead of a durable store in tests. */
export const sessionMemory = {
  name: 'session-memory',
  inject: ['sessions'],
  apply: (ctx: Context) => {
    ctx.sessions.registerStore(new MemorySessionStore())
  },
}
