/**
 * Numbers written for people, `1,234,567`. Not `toLocaleString('en-US')`: its first call loads
 * the ICU locale data, about 25 ms of a command's start, and each later call costs far more than this.
 */
export function groupDigits(value: number): string {
  if (!Number.isFinite(value)) return String(value)
  const [whole = '', fraction] = String(Math.abs(value)).split('.')
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return `${value < 0 ? '-' : ''}${grouped}${fraction === undefined ? '' : `.${fraction}`}`
}
