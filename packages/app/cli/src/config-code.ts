/**
 * `CODE: ` before a configuration error, wherever rein says one (`rein run` failing to load a file,
 * `rein chat` refusing to reload it), so the same file's problem reads the same and can be looked
 * up without `-v`.
 */

import { isReinError } from '@rein/base'

/** Codes of a composition that cannot be loaded: the READMEs (compose's, the CLI's) explain each. */
const CONFIG_CODES = new Set(['CONFIG_NOT_FOUND', 'CONFIG_INVALID', 'PLUGIN_NOT_BUILT'])

/**
 * `CODE: ` for one of the codes above, or any report of a file's problems (`details.path` and
 * `problems`: an agents row's unknown provider); '' for anything else.
 */
export function shownCode(error: unknown): string {
  if (!isReinError(error)) return ''
  const fileReport = typeof error.details?.path === 'string' && Array.isArray(error.details.problems)
  return CONFIG_CODES.has(error.code) || fileReport ? `${error.code}: ` : ''
}
