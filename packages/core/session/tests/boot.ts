import { Context } from '@deepseek-ai/cordis'
import SessionService, { sessionMemory } from '../src/index.ts'

/** A root context with `ctx.sessions` and the in-memory store. */
export async function boot() {
  const root = new Context()
  await root.plugin(SessionService)
  await root.plugin(sessionMemory)
  return root
}
