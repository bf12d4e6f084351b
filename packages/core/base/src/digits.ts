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

/** A count and its noun, the noun plural unless the count is one: `1 line`, `1,200 lines`. */
export function counted(count: number, noun: string): string {
  return `${groupDigits(count)} ${noun}${count === 1 ? '' : 's'}`
}

/**
 * An amount of money written for people and models: four decimals from a cent up, two significant
 * digits below it, never in exponent form (`toPrecision` writes 0.0000001 as `1.0e-7`).
 */
export function formatMoney(amount: number): string {
  if (!Number.isFinite(amount)) return String(amount)
  if (amount === 0) return '0'
  const size = Math.abs(amount)
  if (size >= 0.01) return amount.toFixed(4)
  // Decimals that keep two significant digits; toFixed writes at most 100.
  const decimals = Math.min(100, 1 - Math.floor(Math.log10(size)))
  return Number(amount.toPrecision(2)).toFixed(decimals)
}

/**
 * A number as plain decimals, as short as round-trips (`String`'s digits) but never in exponent
 * form: 1e-7 is `0.0000001`. For a figure a person gave, which must read back as they wrote it.
 */
export function plainNumber(value: number): string {
  const text = String(value)
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text)
  if (!match) return text
  const [, sign = '', head = '', tail = '', power = '0'] = match
  const digits = head + tail
  const exponent = Number(power)
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`
  return `${sign}${digits.padEnd(exponent + 1, '0')}`
}

/** Significant digits money keeps: far more than any price has, far fewer than float noise needs. */
const MONEY_DIGITS = 12

/**
 * `amount` without floating-point noise: binary fractions make 1142 × 0.1 / 10⁶ come out as
 * 0.00011520000000000001 and 0.1 + 0.2 as 0.30000000000000004, which every place that shows money
 * would otherwise show, each differently, and a limit compared with it would let a step too many by.
 */
export function roundMoney(amount: number): number {
  return Number.isFinite(amount) ? Number(amount.toPrecision(MONEY_DIGITS)) : amount
}

/** The sum of two amounts of money, without floating-point noise (12 significant digits): 0.1 + 0.2 is 0.3. */
export function addMoney(a: number, b: number): number {
  return roundMoney(a + b)
}
