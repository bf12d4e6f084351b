/**
 * Text shaped like a credential, masked in what a tool line shows. The environment's own secrets
 * are masked by value (`maskText`); these are keys the model wrote itself (a user pasted one, or
 * it made one up), which match no variable: the shapes @rein/base knows (`KEY_SHAPES`).
 */

import { maskKeyShapes as maskEveryKey } from '@rein/base'

const MASK = '***'

/**
 * A key's start left by a cut (`ghp_0123abcd…`): too short for its shape, still part of a key. Any
 * run after a known prefix, ending where the text was cut. (A private key's cut body is masked by
 * its shape above, which runs to the end of the text when the END line is missing.)
 */
const CUT_KEY = /\b(?:sk-|gh[pousr]_|github_pat_|AKIA|xox[abprs]-|eyJ|AIza)[^\s"]*…$/

/**
 * A run of 24 or more letters, digits, `_` and `-` holding both letters and digits: a random token
 * of a kind with no known prefix (`rk_live_…`, `glpat-…`, `hf_…`), or a hash. Masked only where
 * arguments are shown because the tool refused them, so a hash in a valid call still reads.
 */
const TOKEN_RUN = /(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*[A-Za-z])(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{24,}/g
/** The start of such a run where the text was cut: 8 characters or more of letters and digits, both. */
const CUT_TOKEN = /(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*[A-Za-z])(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{8,}…$/

/** `text` with every run shaped like a known kind of key (and such a key's start before a final `…`) as `***`. */
export function maskKeyShapes(text: string): string {
  return maskEveryKey(text, MASK).replace(CUT_KEY, `${MASK}…`)
}

/** `maskKeyShapes`, and any long random-looking token too: for arguments no tool accepted. */
export function maskTokens(text: string): string {
  return maskKeyShapes(text).replace(TOKEN_RUN, MASK).replace(CUT_TOKEN, `${MASK}…`)
}
