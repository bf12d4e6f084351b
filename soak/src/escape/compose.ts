/**
 * Random escape attempts: paths composed from fragments that lead out (.., links out, absolute
 * prefixes, look-alikes, encodings, odd separators, control characters, long names) and the names
 * inside, given to a random tool. Seeded: the same seed makes the same calls.
 */
import type { Rng } from '../plan.ts'
import type { EscapeCase, EscapeTool } from './corpus.ts'

const PREFIXES = ['', '', '', './', '/', '{ws}/', '{base}/', '{outside}/', '/proc/self/root{ws}/', '/proc/self/cwd/', '//', '{ws}/../', '~/'] as const
const FRAGMENTS = [
  '..', '..', '..', '.', 'sub', 'deep', 'inside.txt', 'secret.txt', 'outside', 'nested', 'ws', 'ws-other', 'top.txt', 'hard.txt',
  'link-out-dir', 'link-out-file', 'link-deep', 'link-root', 'link-proc', 'link-up', 'link-in', 'link-parent', 'link-chain',
  'chain1', 'dangling-out', 'hard-out', 'root-link', 'etc', 'passwd', 'proc', 'self', 'root', 'cwd', 'fd',
  '%2e%2e', '%2f', '\u2025', '\uFF0E\uFF0E', '\u2024\u2024', '\uFE52\uFE52', '.\u200b.', '..\u2215', '..\uFF0F', '..\\', '\\',
  '\n', '\r', '\t', ' ', '..\n', '\0', '*', '**', '?', '[.][.]', '{..,sub}', '.*', '~',
  '{repeat:255:a}', '{repeat:256:a}', '{repeat:60:../}', '{repeat:200:./}',
] as const
const SEPARATORS = ['/', '/', '/', '/', '//', '/./', '\\', '\\/'] as const
const TOOLS: readonly EscapeTool[] = ['read', 'read', 'write', 'edit', 'multi_edit', 'glob', 'glob', 'grep', 'grep', 'bash']

/** One random path: a prefix, then 1–7 fragments joined by mostly plain separators. */
function randomPath(random: Rng): string {
  const count = 1 + random.int(7)
  let path = random.pick(PREFIXES)
  for (let index = 0; index < count; index++) {
    if (index > 0) path += random.pick(SEPARATORS)
    path += random.pick(FRAGMENTS)
  }
  // The NUL and newline fragments are rare enough already; a path must not be empty for the schema.
  return path === '' ? '.' : path
}

/** Case `n` of a random run: a random tool given random paths. */
export function randomCase(random: Rng, n: number): EscapeCase {
  const tool = random.pick(TOOLS)
  const path = randomPath(random)
  const from = `random #${n}`
  switch (tool) {
    case 'read':
      return { label: `${from}: read ${JSON.stringify(path)}`, tool, args: { path }, expect: 'any', from }
    case 'write':
      return { label: `${from}: write ${JSON.stringify(path)}`, tool, args: { path, content: 'x' }, expect: 'any', from }
    case 'edit':
      return { label: `${from}: edit ${JSON.stringify(path)}`, tool, args: { path, old_string: random.pick(['inside', 'SENTINEL-OUTSIDE', 'HARDLINKED']), new_string: 'x' }, expect: 'any', from, readFirst: true }
    case 'multi_edit':
      return { label: `${from}: multi_edit ${JSON.stringify(path)}`, tool, args: { path, edits: [{ old_string: random.pick(['inside', 'SENTINEL-OUTSIDE']), new_string: 'x' }] }, expect: 'any', from, readFirst: true }
    case 'glob':
      return random.chance(0.5)
        ? { label: `${from}: glob pattern ${JSON.stringify(path)}`, tool, args: { pattern: path }, expect: 'any', from }
        : { label: `${from}: glob * under ${JSON.stringify(path)}`, tool, args: { pattern: random.pick(['*', '**', '**/*', '*/*']), path }, expect: 'any', from }
    case 'grep':
      return random.chance(0.5)
        ? { label: `${from}: grep under ${JSON.stringify(path)}`, tool, args: { pattern: 'SENTINEL-OUT.IDE|root:x|HARDL.NKED', path }, expect: 'any', from }
        : { label: `${from}: grep glob ${JSON.stringify(path)}`, tool, args: { pattern: 'SENTINEL-OUT.IDE|root:x|HARDL.NKED', glob: path }, expect: 'any', from }
    default:
      return { label: `${from}: bash workdir ${JSON.stringify(path)}`, tool, args: { workdir: path }, expect: 'any', from }
  }
}
