/**
 * The text compaction puts in place of a long field of a call's arguments it pruned. A model may
 * copy its own earlier call, placeholder and all: a tool must never take the placeholder for the
 * text it stands for (a write would replace a file's content with it), so both sides share it here.
 */

/** `[2000 characters left out to save context]`: what the model reads in place of `chars` characters. */
export function leftOutText(chars: number): string {
  return `[${chars} characters left out to save context]`
}

// Whitespace around it too: a model copying the call may add a line break.
const LEFT_OUT = /^\s*\[\d+ characters left out to save context\]\s*$/

/** Whether `text` is only such a placeholder (with whitespace around it, or not). */
export function isLeftOutText(text: string): boolean {
  return LEFT_OUT.test(text)
}
