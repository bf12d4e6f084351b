/**
 * Text shaped like a credential: only shapes a key has and prose does not (a known prefix, then a
 * long run). Memory refuses such content; the cli masks it in the tool lines it prints, otel-http in
 * exported content. An environment's own secrets are found by value instead (`secretValues`).
 */

/** Each kind of key, named as a person would say it, with the pattern of one. */
export const KEY_SHAPES: readonly { readonly kind: string; readonly pattern: RegExp }[] = Object.freeze([
  { kind: 'an sk- API key', pattern: /\bsk-[A-Za-z0-9_-]{20,}/ },
  { kind: 'an AWS access key', pattern: /\bAKIA[0-9A-Z]{16}\b/ },
  { kind: 'a GitHub token', pattern: /\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{20,}/ },
  { kind: 'a Slack token', pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/ },
  // The key's body too, not the header alone (to the end of the text when the END line is missing):
  // masked, none of it is left. In JSON arguments its line breaks are `\n` escapes.
  { kind: 'a private key', pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/ },
  { kind: 'a JSON Web Token', pattern: /\beyJ[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}/ },
  // A longer run is masked whole: none of it left as a tail that could be the key's.
  { kind: 'a Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35,}/ },
])

/** Each shape, global: every key in a text is masked, not only the first. */
const EVERY_KEY: readonly { readonly kind: string; readonly pattern: RegExp }[] = KEY_SHAPES.map(({ kind, pattern }) => ({ kind, pattern: new RegExp(pattern.source, 'g') }))

/**
 * `text` with every run shaped like a known kind of key replaced by `mask`: a string, or a function
 * saying what to write for a kind (memory writes `[a GitHub token]`). Shapes are tried in
 * `KEY_SHAPES` order, each over the text the ones before it left.
 */
export function maskKeyShapes(text: string, mask: string | ((kind: string) => string) = '***'): string {
  let masked = text
  for (const { kind, pattern } of EVERY_KEY) {
    // A function, not a replacement string: a `$` in the mask is written as it is, not read as `$&`.
    const said = typeof mask === 'string' ? mask : mask(kind)
    masked = masked.replace(pattern, () => said)
  }
  return masked
}
