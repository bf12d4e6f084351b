/**
 * Text from a model or a server is data, not terminal commands: before it is shown on a terminal,
 * C0 controls (other than newline and tab), DEL and C1 controls are made visible instead of acted on,
 * and so are bidi overrides and isolates and the line and paragraph separators, which would make a
 * line (a command that ran) read as other than it is. `--json` output is never passed through here.
 */

import { unicodeEscapes } from '@rein/base'

// eslint-disable-next-line no-control-regex
const CONTROLS = /\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g

/** `ESC` → `^[`, `BEL` → `^G`, `DEL` → `^?`, a C1 control → `<9b>`, U+202E → `\u202e`; `\r\n` → `\n`. */
export function neutralize(text: string): string {
  return text.replace(CONTROLS, (control) => {
    if (control === '\r\n') return '\n'
    const code = control.charCodeAt(0)
    if (code > 0xff) return unicodeEscapes(control)
    if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`
    if (code === 0x7f) return '^?'
    return `<${code.toString(16)}>`
  })
}
