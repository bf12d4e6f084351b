/** Reading Node's system errors without trusting their shape. */

/** The `code` of a Node system error (`ENOENT`, `EEXIST`, …), if any. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

