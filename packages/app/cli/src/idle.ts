/**
 * Node's event loop running empty (`beforeExit`) while rein still awaits something means nothing
 * can ever settle it: a row whose start (or stop) awaits a promise nobody will resolve. Left alone,
 * the await never settles and Node exits 13 without a word.
 */

/**
 * Runs `work` with a signal aborted if the event loop runs empty meanwhile (see above), or once
 * `giveUp` aborts: what never settles while it keeps a timer or a socket open never lets the loop
 * run empty, and only the user can give it up.
 */
export async function untilIdle<T>(work: (idle: AbortSignal) => Promise<T>, giveUp?: AbortSignal): Promise<T> {
  const idle = new AbortController()
  const onIdle = () => {
    // Woken once: a `work` that ignored the abort must not keep the process spinning.
    if (idle.signal.aborted) return
    idle.abort()
    // Node emits `beforeExit` again only if the loop came alive after it: what gave up here may go
    // on to another wait like this one (a reload given up, then the dispose), which must get its own.
    setImmediate(() => {})
  }
  const onGiveUp = () => idle.abort()
  if (giveUp?.aborted) idle.abort()
  giveUp?.addEventListener('abort', onGiveUp, { once: true })
  process.on('beforeExit', onIdle)
  try {
    return await work(idle.signal)
  } finally {
    process.off('beforeExit', onIdle)
    giveUp?.removeEventListener('abort', onGiveUp)
  }
}
