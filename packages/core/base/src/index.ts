/** @rein/base: the types and errors every rein package shares. No cordis plugin lives here. */

export { ReinError, isReinError, errorChain, type ReinErrorOptions } from './rein-error.ts'
/** An error and its `cause`s, outermost first, for finding a typed error under wrappers. */
export { errorCauses } from './rein-error.ts'
/** What a thrown value says (an Error's message, a string), or undefined; never throws, whatever was thrown. */
export { thrownMessage } from './rein-error.ts'
/** A thrown value's message as a string (an Error's or a plain object's message, else `String(value)`), for composing a message; never throws. */
export { messageOf } from './rein-error.ts'
/** A value's kind for a message (`a number`, `an array`, `null`): what was given where something else belongs. */
export { kindOf } from './rein-error.ts'
export {
  toFrozenJson,
  freezeJson,
  isFrozenJson,
  childPath,
  type JsonPrimitive,
  type JsonValue,
  type JsonObject,
  type FrozenJson,
  type ToFrozenJsonOptions,
} from './json.ts'
export type { Brand, SessionId, CallId, MessageId, RunId, JobId } from './ids.ts'
export { ensurePrivateDir, openPrivateFile, makeFilePrivate, PRIVATE_FILE_MODE, PRIVATE_DIR_MODE } from './private-files.ts'
export { closest } from './suggest.ts'
/** A number with its thousands grouped (`1,234,567`), without the locale machinery. */
export { formatMoney, groupDigits, plainNumber } from './digits.ts'
/** A count with its noun, plural unless one: `1 line`, `1,200 lines`. */
export { counted } from './digits.ts'
/** Money without floating-point noise, to 12 significant digits: `addMoney(0.1, 0.2)` is 0.3; `roundMoney` for one computed amount. */
export { addMoney, roundMoney } from './digits.ts'
/** Whether a cordis event has listeners: skip a per-entry dispatch nobody would receive. */
export { hasListeners, type ListenerSource } from './listeners.ts'
/** Calls a cordis event's listeners without a dispatch through the context's proxies; failures go to a reporter. */
export { callListeners } from './listeners.ts'
/** Per-event dispatch for a service, its context's event service read once; failures go to a reporter. */
export { eventSender, type EventContext, type EventSender } from './listeners.ts'
/** One character nobody sees that changes what a model reads or how a line shows (controls, bidi marks, zero-width and tag characters). */
export { HIDDEN_CHARACTER } from './hidden-characters.ts'
/** The placeholder compaction puts in place of a long argument field it pruned, and a check that a value is only that. */
export { leftOutText, isLeftOutText } from './left-out.ts'
/** Awaits a promise unless a signal aborts first. */
export { raceSignal } from './race-signal.ts'
/** The /proc process table: live processes, zombies, environment entries (Linux; undefined elsewhere). */
export { listProcesses, readProcess, isZombie, hasEnvironmentEntry, type ProcessEntry } from './process-table.ts'
/** Which of several environment entries a process carries, its environment read once. */
export { environmentEntriesOf } from './process-table.ts'
/** Whether a pid names a running process (another user's counts, a zombie does not). */
export { isProcessAlive } from './process-table.ts'
/** The temporary files among a folder's names whose writing process is gone: what a killed rein left. */
export { leftByGoneProcesses } from './process-table.ts'
/** Removes from a folder the temporary files whose writing process is gone. */
export { removeLeftByGoneProcesses } from './process-table.ts'
/** What a command or job started, from the process table: a process's descendants, and the groups its processes made (`withDescendants`, `groupsMadeBy`). */
export { withDescendants, groupsMadeBy } from './process-table.ts'
/** An AbortSignal's job inside a package without one (each AbortSignal costs Node 20 a promotion): stopped, why, who to tell. */
export { Stop } from './stop.ts'
/** The head or tail of a text, or the text shortened with `…`, never splitting a surrogate pair. */
export { cutHead, cutTail, shorten } from './text-cut.ts'
/** Lines in a text as a reader counts them (a final newline ends the last line; no text, no lines), and its bare newlines for a running count. */
export { countLines, countNewlines } from './count-lines.ts'
/** The longest wait a Node timer can do, in ms: the cap of every Config field that reaches one. */
export { MAX_TIMER_MS } from './timers.ts'
/** A path as a listing, table or message shows it: quoted as JSON when it holds a line break or another control character. */
export { listedPath } from './listed-path.ts'
/** A value as one word to paste into a shell, single-quoted unless plain: for advice that names a command. */
export { shellWord } from './shell-word.ts'
/** The longest start of a text within a number of UTF-8 bytes, cut between characters. */
export { cutToBytes } from './text-cut.ts'
/** Half a character (a lone UTF-16 surrogate, often a cut emoji), which UTF-8 cannot hold: `LONE_SURROGATE.test(text)`. */
export { LONE_SURROGATE } from './text-cut.ts'
/** Code points in a text (an emoji is one), and a text as JSON `\\uXXXX` escapes. */
export { codePointCount, unicodeEscapes } from './text-cut.ts'
/** How the temporary copies of a file begin: its name, cut with a digest when a tail would not fit the 255-byte limit. */
export { tempStem, TEMP_TAIL_MAX_BYTES } from './temp-names.ts'
/** A file name with a suffix added, the name cut so the whole fits the 255-byte limit. */
export { withSuffix } from './temp-names.ts'
/** Whether an environment variable or config key names a secret (`OPENAI_API_KEY`, `apiKey`, `Cookie`; not `apiKeyEnv`). */
export { isSecretName } from './secret-names.ts'
/** The environment variables named like secrets that hold something, as `{name, value}`. */
export { secretEnvironment } from './secret-names.ts'
/** Kinds of key by their shape (`sk-…`, `ghp_…`, a private key block), each `{kind, pattern}`: what memory refuses and the cli masks. */
export { KEY_SHAPES } from './key-shapes.ts'
/** `text` with every run shaped like a known kind of key replaced by `mask` (`***` unless given; a function says what to write for a kind). */
export { maskKeyShapes } from './key-shapes.ts'
/** Masking for what rein shows: `secretValues(env)` and `secretsIn(config)` (longest first), `maskText` and `maskSecrets` replace them, and URL credentials, with `***`. */
export { maskSecrets, maskText, secretsIn, secretValues } from './mask-secrets.ts'
/** A key's body after its kind prefix (`sk-proj-…` → `…`): what a message may quote of it alone. */
export { keyBody } from './mask-secrets.ts'
/** A URL as a message shows it: scheme, host and path, no user, password, query or fragment, keys in the path as `***`. */
export { shownUrl } from './shown-url.ts'
/** A path (or a URL as text) with key-shaped segments, and the segment after one named like a secret (`/key/<k>`), as `***`. */
export { maskUrlPath } from './shown-url.ts'
/** The values a URL as shown hides (its password, keys in its path, every query value), as written and decoded: what to cut out of text a server quotes back. */
export { urlSecrets } from './shown-url.ts'
/** Plain words for Node's connection and TLS error codes (`ECONNREFUSED` → "connection refused"), and whether one is a TLS failure. */
export { connectionWords, isTlsFailure } from './connection-words.ts'
