// @ts-check
/**
 * What V8's optimizing compiler did in one run of a harness: how many functions it compiled and
 * how long that took (on its helper threads, so inside the CPU figures; the time is elapsed, so it
 * is the CPU only on a machine otherwise idle), and every deoptimization
 * outside Node's own code with the place V8 names first (where it happened; not where that was
 * inlined). Part of the loop's CPU gap to the floor over the issue's 200 turns is this compile
 * work (the report sets the two side by side; with `--warmup 1000`, once it is done, what is left
 * is the harness's own code), and a deoptimization in rein's hot path throws one away: the report
 * lists them so a change that brings one back is seen in the next run.
 */

import { pathToFileURL } from 'node:url'

/**
 * @typedef {{ fn: string, reason: string, at: string }} Deopt
 * @typedef {{ compiles: number, compileMs: number, deopts: Deopt[], firstTurnMs?: number }} CompilerTrace
 *   `firstTurnMs`: the compile time of a run of the same harness stopped after its first measured
 *   turn (start and warm-up included), when run.mjs traced one; the difference is the measured turns' own.
 */

/** The node flags that make a run print what `parseCompilerTrace` reads (on stdout). */
export const TRACE_FLAGS = ['--trace-opt', '--trace-deopt-verbose']

const COMPLETED = /^\[completed compiling .*? - took ([\d.]+), ([\d.]+), ([\d.]+) ms\]/
const BAILOUT = /^\[bailout \(kind: [^,]+, reason: (.*?)\): begin\. deoptimizing \S+ <JSFunction (\S*)/
const AT = /^\s*;;; deoptimize at <([^>]*)>/

/**
 * Reads a run's stdout under `TRACE_FLAGS`; `root` is cut from the places named. Deoptimizations
 * inside Node's own modules are left out: they come and go with Node, not with the harness.
 * @param {string} stdout @param {string} root
 * @returns {CompilerTrace}
 */
export function parseCompilerTrace(stdout, root) {
  let compiles = 0
  let compileMs = 0
  /** @type {Deopt[]} */
  const deopts = []
  /** @type {{ fn: string, reason: string } | undefined} */
  let open
  for (const line of stdout.split('\n')) {
    const done = COMPLETED.exec(line)
    if (done) {
      compiles++
      compileMs += Number(done[1]) + Number(done[2]) + Number(done[3])
      continue
    }
    const bailout = BAILOUT.exec(line)
    if (bailout) {
      open = { fn: bailout[2] || '(anonymous)', reason: bailout[1] ?? '' }
      continue
    }
    const at = open && AT.exec(line)
    if (open && at) {
      const place = (at[1] ?? '').replace(pathToFileURL(root.replace(/\/$/, '')).href + '/', '')
      if (!place.startsWith('node:')) deopts.push({ ...open, at: place })
      open = undefined
    }
  }
  return { compiles, compileMs, deopts }
}
