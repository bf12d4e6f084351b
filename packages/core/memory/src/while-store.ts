/**
 * Registrations that exist only while a memory store is registered and available: the memory tools
 * and the prompt section. Without one they are not there at all, so the model never meets a tool
 * that can only fail, nor an error meant for people.
 */

import type { Context, Logger } from '@deepseek-ai/cordis'

/** Told when a store comes or goes; resolves once its registrations are made or removed. */
export type StoreWatcher = () => Promise<void>

/** One registration: makes it, returns its disposer. */
export type Registration = () => () => unknown

/**
 * Keeps `registrations` (owned by `ctx`'s fiber) in step with `hasStore()` (a usable store is
 * registered) until that fiber is disposed. A registration that throws is logged and undoes the ones made before it.
 */
export function whileStore(ctx: Context, watchers: Set<StoreWatcher>, hasStore: () => boolean, label: string, registrations: readonly Registration[], logger: Logger): void {
  ctx.effect(() => {
    let made: (() => unknown)[] | undefined
    const undo = async () => {
      const offs = made?.splice(0).reverse() ?? []
      made = undefined
      for (const off of offs) await off()
    }
    const sync: StoreWatcher = async () => {
      if (!hasStore()) return undo()
      if (made !== undefined) return
      made = []
      try {
        for (const register of registrations) made.push(register())
      } catch (error) {
        logger.warn('%s were not registered: %s', label, error)
        await undo()
      }
    }
    watchers.add(sync)
    void sync()
    return async () => {
      watchers.delete(sync)
      await undo()
    }
  }, label)
}
