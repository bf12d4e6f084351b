/**
 * The check after every row has started: a plugin whose config names things other rows provide (a
 * tool, a model) listens to `compose/check` and adds a line per problem, so a composition that
 * loads but cannot work fails at load rather than at first use.
 */

import type { Context } from '@deepseek-ai/cordis'

declare module '@deepseek-ai/cordis' {
  interface Events {
    /** Emitted once every row has started (on load and on reload): push a line per problem, naming your row's field. */
    'compose/check'(problems: string[]): void | Promise<void>
  }
}

/** What the loaded rows' `compose/check` listeners found wrong. */
export async function checkLoaded(ctx: Context): Promise<string[]> {
  const problems: string[] = []
  await ctx.parallel('compose/check', problems)
  return problems
}
