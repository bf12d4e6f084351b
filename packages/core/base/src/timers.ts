/**
 * The longest a Node timer waits, in ms (2^31−1, about 24.8 days). Past it `setTimeout` fires at
 * once and `AbortSignal.timeout` throws: a Config field that reaches a timer is capped here.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1
