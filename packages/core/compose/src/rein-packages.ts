/**
 * rein's own package names. They are not on npm, so a missing one is installed from the tarballs
 * `pnpm pack:all` makes, and a misspelt one is the nearest of these, never `npm install` of the typo
 * (which fetches whatever someone else published under that name). tests/rein-package-names.test.ts
 * keeps this list equal to the workspace's.
 */

import { closest } from '@rein/base'

export const REIN_PACKAGES: readonly string[] = [
  '@rein/agent', '@rein/base', '@rein/checkpoint', '@rein/checkpoint-jsonl', '@rein/cli', '@rein/compose',
  '@rein/jobs', '@rein/llm', '@rein/llm-deepseek', '@rein/llm-openai', '@rein/memory', '@rein/memory-sqlite',
  '@rein/otel-http', '@rein/session', '@rein/session-jsonl', '@rein/subagents', '@rein/telemetry',
  '@rein/testkit', '@rein/tool-bash', '@rein/tool-fs', '@rein/tools',
]

/**
 * What to do about the package of the row name `name` (a package, or a subpath of one) that is not
 * installed beside the config file. A name that only looks like rein's (`@Rein/Tools`, `rein/tools`)
 * gets the rein package it meant: npm refuses capitals, and `rein` is someone else's package.
 */
export function missingPackageHint(name: string): string {
  const written = packageOf(name)
  const meant = reinPackageOf(name)
  if (meant === undefined) return `is it installed? npm install ${written} in that file's folder`
  if (REIN_PACKAGES.includes(written)) {
    return `is it installed? rein's packages are not on npm: run pnpm pack:all in the rein repository and npm install its dist-packages/${written.slice(1).replace('/', '-')}-*.tgz in that file's folder`
  }
  const near = nearestPlugin(meant)
  return near ? `${name} is not one of rein's plugin packages: did you mean ${near}?` : `${name} is not one of rein's plugin packages (${PLUGIN_PACKAGES.join(', ')})`
}

/** The package a row name imports from: `@scope/name` or `name`, without a subpath (`@rein/tools/approval`: `@rein/tools`). */
export function packageOf(name: string): string {
  const parts = name.split('/')
  return (name.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/')
}

/** `@rein/<word>` in lower case when `name` is written as one of rein's, with or without its `@`, in any case; else undefined. */
function reinPackageOf(name: string): string | undefined {
  const match = /^@?rein\/([^/]*)/i.exec(name)
  return match ? `@rein/${(match[1] ?? '').toLowerCase()}` : undefined
}

/** rein's packages that are libraries, not plugins: a row loading one has nothing to start. */
const LIBRARIES = new Set(['@rein/base', '@rein/cli', '@rein/compose', '@rein/testkit'])

/** The packages a row can name: what a misspelt row name is matched against. */
const PLUGIN_PACKAGES = REIN_PACKAGES.filter((name) => !LIBRARIES.has(name))

/**
 * The plugin package `name` most likely meant: the nearest by edits (`agents`: `agent`), compared
 * without the `@rein/` every candidate shares (which would make any short typo look near); else one
 * whose name has the word typed as a part of it (`openai`: `llm-openai`; the shortest when several do).
 */
function nearestPlugin(name: string): string | undefined {
  const typed = name.slice('@rein/'.length).toLowerCase()
  const short = (candidate: string) => candidate.slice('@rein/'.length)
  const near = closest(typed, PLUGIN_PACKAGES.map(short))
  if (near !== undefined) return `@rein/${near}`
  const [shortest] = PLUGIN_PACKAGES.filter((candidate) => short(candidate).split('-').includes(typed)).sort((a, b) => a.length - b.length)
  return shortest
}
