/**
 * `pnpm pack:all`: packs every public package under packages/ into dist-packages/*.tgz — the files
 * npm would publish, with pnpm's `workspace:` ranges rewritten to versions — so a project outside
 * this repository can `npm install` them. Run `pnpm build` first; a missing build output stops it.
 */

import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { ReinError, errorChain } from '@rein/base'

const run = promisify(execFile)
const DEPENDENCY_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies'] as const
const INSTALLED_FIELDS = ['dependencies', 'peerDependencies', 'optionalDependencies'] as const
// Points at src/, which is not packed; only this repository's tools set it.
const SOURCE_CONDITION = '@rein/source'
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'lib', 'src', 'tests'])

/** The package.json fields this script reads. */
export interface Manifest {
  name?: string
  version?: string
  private?: boolean
  bin?: string | Record<string, string>
  main?: string
  types?: string
  exports?: unknown
  dependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}

/** A package found under packages/: its folder relative to the root, and its manifest. */
export interface WorkspacePackage {
  dir: string
  manifest: Manifest
}

/** Every package.json under `<root>/packages`, in path order. */
export function findPackages(root: string): WorkspacePackage[] {
  const found: WorkspacePackage[] = []
  const walk = (dir: string) => {
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))
    if (entries.some((entry) => entry.isFile() && entry.name === 'package.json')) {
      found.push({ dir: relative(root, dir).split('\\').join('/'), manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest })
    }
    for (const entry of entries) {
      if (entry.isDirectory() && !SKIPPED_FOLDERS.has(entry.name) && !entry.name.startsWith('.')) walk(join(dir, entry.name))
    }
  }
  const packages = join(root, 'packages')
  if (existsSync(packages)) walk(packages)
  return found
}

/** The files a manifest points users at (exports, bin, main, types), except the source condition. */
export function entryFiles(manifest: Manifest): string[] {
  const files = new Set<string>()
  const collect = (value: unknown, key?: string) => {
    if (key === SOURCE_CONDITION) return
    if (typeof value === 'string') files.add(value)
    else if (typeof value === 'object' && value !== null) {
      for (const [name, inner] of Object.entries(value)) collect(inner, name)
    }
  }
  collect(manifest.exports)
  collect(manifest.bin)
  collect(manifest.main)
  collect(manifest.types)
  // `./package.json` is an export of itself, not a build output.
  return [...files].filter((file) => file.replace(/^\.\//, '') !== 'package.json').sort()
}

// A package specifier as npm allows new names (lower case), optionally `node:`: an environment
// variable's name or a sentence in quotes is not one.
const SPECIFIER = String.raw`["']((?:node:)?@?[a-z0-9][\w.~-]*(?:/[\w.~@-]+)*)["']`
/**
 * Bare specifiers a built file loads: static and dynamic imports, re-exports, and `require` calls
 * (`require`, esbuild's `__require`, a `createRequire(…)` result) with a literal name.
 */
const LOADS = [
  new RegExp(String.raw`\b(?:from|import)\s*${SPECIFIER}`, 'g'),
  new RegExp(String.raw`\bimport\(\s*${SPECIFIER}\s*\)`, 'g'),
  new RegExp(String.raw`\b(?:require|__require)\(\s*${SPECIFIER}\s*\)`, 'g'),
  new RegExp(String.raw`\bcreateRequire\([^()]*\)\(\s*${SPECIFIER}\s*\)`, 'g'),
]
const BUILTINS = new Set(builtinModules)

/** The package each bare specifier in `code` names (`@scope/name` or `name`), Node's built-ins left out. */
function loadedPackages(code: string): string[] {
  const names = new Set<string>()
  for (const pattern of LOADS) {
    for (const [, specifier = ''] of code.matchAll(pattern)) {
      if (specifier.startsWith('node:')) continue
      const name = specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/')
      if (!BUILTINS.has(name)) names.add(name)
    }
  }
  return [...names].sort()
}

/** Packages a built `.mjs` file of `dir` loads that its manifest does not install with it. */
function undeclaredLoads(root: string, dir: string, manifest: Manifest): string[] {
  const dist = join(root, dir, 'dist')
  if (!existsSync(dist)) return []
  const installed = new Set([manifest.name, ...INSTALLED_FIELDS.flatMap((field) => Object.keys(manifest[field] ?? {}))])
  return readdirSync(dist).filter((file) => file.endsWith('.mjs')).sort().flatMap((file) =>
    loadedPackages(readFileSync(join(dist, file), 'utf8')).filter((name) => !installed.has(name)).map((name) =>
      `${dir}: dist/${file} loads ${name}, which its package.json does not list in dependencies or peerDependencies; declare it, or bundle it into the build`))
}

/**
 * What stops these packages from being packed, one line each: an entry file not built yet, a
 * dependency on a workspace package that is private (npm would look for it on the registry), or a
 * package a built file loads that would not be installed with it (a stale or unbundled build).
 */
export function packProblems(root: string, packages: readonly WorkspacePackage[]): string[] {
  const problems: string[] = []
  const publicNames = new Set(packages.filter((pkg) => pkg.manifest.private !== true).map((pkg) => pkg.manifest.name))
  for (const { dir, manifest } of packages) {
    if (manifest.private === true) continue
    for (const file of entryFiles(manifest)) {
      if (!existsSync(join(root, dir, file))) problems.push(`${dir}: ${file} is missing; run \`pnpm build\` first`)
    }
    for (const field of INSTALLED_FIELDS) {
      for (const [name, range] of Object.entries(manifest[field] ?? {})) {
        if (range.startsWith('workspace:') && !publicNames.has(name)) {
          problems.push(`${dir}: ${field} names ${name}, which is not a public package under packages/, so it is not packed and npm could not install it`)
        }
      }
    }
    problems.push(...undeclaredLoads(root, dir, manifest))
  }
  return problems
}

/** `workspace:` ranges left in a packed manifest, as `field.name: range`; pnpm should have rewritten them all. */
export function workspaceRanges(manifest: Manifest): string[] {
  return DEPENDENCY_FIELDS.flatMap((field) =>
    Object.entries(manifest[field] ?? {}).filter(([, range]) => range.startsWith('workspace:')).map(([name, range]) => `${field}.${name}: ${range}`))
}

/** The package.json inside a tarball npm or pnpm made (every file sits under `package/`). */
export async function packedManifest(tarball: string): Promise<Manifest> {
  const { stdout } = await run('tar', ['-xzOf', tarball, 'package/package.json'], { maxBuffer: 16 * 1024 * 1024 })
  return JSON.parse(stdout) as Manifest
}

/**
 * Packs each public package into `destination` (emptied first); returns the tarballs' paths.
 * Throws `PACK_NOT_READY` (see `packProblems`) before packing anything, or `PACK_WORKSPACE_RANGE`
 * when a packed manifest still holds a `workspace:` range.
 */
export async function packAll(root: string, destination: string): Promise<string[]> {
  const packages = findPackages(root)
  const problems = packProblems(root, packages)
  if (problems.length > 0) throw packError('PACK_NOT_READY', problems)
  rmSync(destination, { recursive: true, force: true })
  mkdirSync(destination, { recursive: true })
  const tarballs = await Promise.all(packages.filter((pkg) => pkg.manifest.private !== true).map(async ({ dir }) => {
    const { stdout } = await run('pnpm', ['pack', '--pack-destination', destination, '--json'], { cwd: join(root, dir), maxBuffer: 16 * 1024 * 1024 })
    return (JSON.parse(stdout) as { filename: string }).filename
  }))
  const left = (await Promise.all(tarballs.map(async (tarball) =>
    workspaceRanges(await packedManifest(tarball)).map((range) => `${relative(root, tarball)}: ${range} was not rewritten to a version`)))).flat()
  if (left.length > 0) throw packError('PACK_WORKSPACE_RANGE', left)
  return tarballs
}

/** One error listing every problem; `details.problems` holds the lines. */
function packError(code: string, problems: readonly string[]): ReinError {
  const list = problems.map((problem) => `  - ${problem}`).join('\n')
  return new ReinError(code, `pack:all: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n${list}`, { details: { problems } })
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = fileURLToPath(new URL('..', import.meta.url))
  try {
    const tarballs = await packAll(root, join(root, 'dist-packages'))
    console.log(`pack:all: ${tarballs.length} packages in dist-packages/`)
    for (const tarball of tarballs) console.log(`  ${relative(root, tarball)}`)
  } catch (error) {
    console.error(errorChain(error))
    process.exitCode = 1
  }
}
