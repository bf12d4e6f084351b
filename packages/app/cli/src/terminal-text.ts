/**
 * Text from a model or a server is data, not terminal commands: before it is shown on a terminal,
 * C0 controls (other than newline and tab), DEL and C1 controls are made visible instead of acted on.
 * `--json` output is never passed through here.
 */

// eslint-disable-next-line no-control-regex
const CONTROLS = /\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/** `ESC` → `^[`, `BEL` → `^G`, `DEL` → `^?`, a C1 control → `<9b>`; `\r\n` → `\n`. */
export function neutralize(text: string): string {
  return text.replace(CONTROLS, (control) => {
    if (control === '\r\n') return '\n'
    const code = control.charCodeAt(0)
    if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`
    if (code === 0x7f) return '^?'
    return `<${code.toString(16)}>`
  })
}
