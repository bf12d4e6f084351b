// @ts-check
// The commit a generated report measured, for its header (docs/benchmarks.md, docs/reliability.md).
import { spawnSync } from 'node:child_process'

/**
 * HEAD's short hash in `repo`, with `+changes` when the checkout differs from it anywhere in the
 * repository (new files included), `ownOutput` (the report being written, relative to `repo`)
 * aside; `unknown` outside git.
 * @param {string} repo
 * @param {string} ownOutput
 * @returns {string}
 */
export function measuredCommit(repo, ownOutput) {
  const git = (/** @type {string[]} */ ...args) => spawnSync('git', args, { cwd: repo, encoding: 'utf8' })
  const head = git('rev-parse', '--short', 'HEAD')
  if (head.status !== 0) return 'unknown'
  // Pathspecs from the top, whatever folder `repo` names inside the checkout.
  const status = git('status', '--porcelain', '--', ':/', `:(top,exclude)${ownOutput}`)
  return `${head.stdout.trim()}${status.status !== 0 || status.stdout.trim() !== '' ? '+changes' : ''}`
}
