/**
 * The loader entry tree behind a composition: the rows of one file, read-only. It never writes the
 * file back (cordis's include plugin does), and it imports plugins resolved from the composition's
 * folders (`resolveFrom`: by default the file's own).
 */

import { dirname } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Context, Fiber } from '@deepseek-ai/cordis'
import { EntryTree } from '@deepseek-ai/cordis-plugin-loader'
import { resolvePlugin } from './resolve-plugin.ts'
import { importPlugin } from './typescript-entry.ts'

export class ConfigTree extends EntryTree {
  constructor(ctx: Context, readonly file: string, readonly resolveFrom: readonly string[]) {
    super(ctx)
    this.ctx.baseUrl = pathToFileURL(`${dirname(file)}/`).href
    holdRestarts(this)
  }

  /**
   * Names resolved since the last `forgetResolved`. A load imports each row's plugin three times
   * (the config check, the start, the report), and resolving walks node_modules each time.
   */
  private readonly resolved = new Map<string, string>()

  /** A composition file is the user's: nothing rein does at run time is written back to it. */
  write() {}

  override import(name: string) {
    if (name.startsWith('cordis:')) return super.import(name)
    let url = this.resolved.get(name)
    if (url === undefined) {
      url = resolvePlugin(name, dirname(this.file), this.resolveFrom)
      this.resolved.set(name, url)
    }
    return importPlugin(name, url)
  }

  /** Before a reload: a package installed since the last load is found. */
  forgetResolved() {
    this.resolved.clear()
  }
}

/**
 * A config change restarts the row; when the new config makes it fail, cordis rejects a promise
 * nobody holds, which would crash the process. The failure stays on the fiber, where it is reported.
 */
function holdRestarts(tree: EntryTree) {
  tree.ctx.on('internal/update', function (this: Fiber, _config, _noSave, next) {
    const result: unknown = next()
    if (this.entry?.parent.tree !== tree || !isThenable(result)) return result
    return result.then(undefined, () => undefined)
  }, { global: true })
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof Reflect.get(value, 'then') === 'function'
}
