/** Characters nobody sees on a screen that still change what a model reads or how a terminal shows a line. */

/**
 * Characters a reader cannot see that change what a model reads or how a line shows: controls
 * other than tab and line breaks, the soft hyphen, the combining grapheme joiner, bidi marks,
 * embeddings, overrides and isolates (U+061C, U+200E–200F, U+202A–202E, U+2066–2069), zero-width
 * space, word joiner and invisible math operators (U+2060–2064), deprecated format characters
 * (U+206A–206F), Hangul and Khmer fillers (U+115F, U+1160, U+17B4–17B5, U+3164, U+FFA0), Mongolian
 * and other variation selectors (U+180B–180F, U+FE00–FE0D, U+E0100–E01EF: they can carry hidden
 * bytes), interlinear annotation marks (U+FFF9–FFFB), musical formatting (U+1D173–1D17A), the
 * byte-order mark, and tag characters (invisible ASCII a model still reads). What emoji and some
 * scripts need stays: the joiners U+200C and U+200D, and the presentation selectors U+FE0E and
 * U+FE0F (`❤️` is U+2764 U+FE0F).
 */
// Each is matched alone, combining marks (U+034F, U+17B4…) and joiners too: that is the point.
// oxlint-disable-next-line no-control-regex, no-misleading-character-class -- control characters and lone marks are what it finds
export const HIDDEN_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\u3164\uFE00-\uFE0D\uFEFF\uFFA0\uFFF9-\uFFFB\u{1D173}-\u{1D17A}\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/u
