/**
 * The rules every package under packages/ follows (DESIGN §3, §6). `checkWorkspace` returns one
 * readable line per violation; check-workspace-constraints.ts runs it on this repository.
 */

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

const SOURCE_CONDITION = '@rein/source'
const CORDIS = '@deepseek-ai/cordis'
const REQUIRED_SECTIONS = ['Config', 'Model experience', 'Limitations']
const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'] as const
const EXACT_VERSION = /^\d+\.\d+\.\d+(-[\w.]+)?$/
/** `npm:<package>@` before an exact version: a package installed under another name (an alias). */
const ALIAS = /^npm:(@[^/@]+\/)?[^@]+@/

interface Manifest {
  name?: string
  version?: string
  type?: string
  exports?: Record<string, unknown>
  [field: string]: unknown
}

export function checkWorkspace(root: string): string[] {
  const problems: string[] = []
  const rootManifest = readJson(join(root, 'package.json'))
  const packagesDir = join(root, 'packages')
  if (!existsSync(packagesDir)) return ['packages/ is missing']
  const references = rootReferences(root)

  for (const path of findManifests(packagesDir)) {
    const dir = relative(root, join(path, '..')).split('\\').join('/')
    const parts = dir.split('/')
    if (parts.length === 2) {
      problems.push(`${dir}/package.json: a group folder must not have a package.json (packages go in packages/<group>/<pkg>)`)
      continue
    }
    if (parts.length !== 3) {
      problems.push(`${dir}: a package must sit exactly at packages/<group>/<pkg>`)
      continue
    }
    problems.push(...checkPackage(root, dir, parts[2]!, readJson(path), rootManifest.version, references))
  }
  return problems
}

function checkPackage(root: string, dir: string, pkg: string, manifest: Manifest, rootVersion: string | undefined, references: Set<string>): string[] {
  const problems: string[] = []
  const at = (message: string) => problems.push(`${dir}: ${message}`)
  if (manifest.name !== `@rein/${pkg}`) at(`name is ${JSON.stringify(manifest.name)}; it must be "@rein/${pkg}" (the folder name)`)
  if (manifest.type !== 'module') at('"type" must be "module"')
  if (manifest.version !== rootVersion) at(`version ${JSON.stringify(manifest.version)} differs from the root's ${JSON.stringify(rootVersion)}`)

  const entry = manifest.exports?.['.'] as Record<string, unknown> | undefined
  if (typeof entry !== 'object' || entry === null) at('exports["."] must be an object of conditions')
  else {
    for (const condition of [SOURCE_CONDITION, 'types', 'default']) {
      if (typeof entry[condition] !== 'string') at(`exports["."] lacks the "${condition}" condition`)
    }
    if (Object.keys(entry)[0] !== SOURCE_CONDITION) at(`exports["."] must list "${SOURCE_CONDITION}" first so it wins`)
  }
  if (!manifest.private && JSON.stringify((manifest.publishConfig as Manifest | undefined)?.exports) !== JSON.stringify(published(manifest.exports))) {
    at(`publishConfig.exports must be exports without the "${SOURCE_CONDITION}" condition (src/ is not in the tarball)`)
  }

  for (const field of DEPENDENCY_FIELDS) {
    const deps = (manifest[field] ?? {}) as Record<string, string>
    for (const [name, version] of Object.entries(deps)) {
      if (name.startsWith('@rein/')) {
        if (!version.startsWith('workspace:')) at(`${field}.${name} must use the workspace: protocol, not ${JSON.stringify(version)}`)
      } else if (!EXACT_VERSION.test(version.replace(ALIAS, ''))) {
        at(`${field}.${name} must be pinned to an exact version, not ${JSON.stringify(version)}`)
      }
    }
  }

  const peer = (manifest.peerDependencies as Record<string, string> | undefined)?.[CORDIS]
  const dev = (manifest.devDependencies as Record<string, string> | undefined)?.[CORDIS]
  const direct = (manifest.dependencies as Record<string, string> | undefined)?.[CORDIS]
  const importsCordis = sourceFiles(join(root, dir, 'src')).some((file) => readFileSync(file, 'utf8').includes(`'${CORDIS}'`))
  if (direct) at(`${CORDIS} must be a peer dependency (and a dev dependency), not a dependency`)
  if ((peer || dev || importsCordis) && (!peer || !dev || peer !== dev)) {
    at(`${CORDIS} must be both a peerDependency and a devDependency at the same exact version (peer ${peer ?? 'missing'}, dev ${dev ?? 'missing'})`)
  }

  const readme = join(root, dir, 'README.md')
  if (!existsSync(readme)) at('README.md is missing')
  else {
    const headings = new Set([...readFileSync(readme, 'utf8').matchAll(/^##\s+(.+?)\s*$/gm)].map((match) => match[1]!.toLowerCase()))
    for (const section of REQUIRED_SECTIONS) {
      if (!headings.has(section.toLowerCase())) at(`README.md lacks the "## ${section}" section`)
    }
  }
  if (!existsSync(join(root, dir, 'tsconfig.json'))) at('tsconfig.json is missing')
  else if (!references.has(dir)) at('is not referenced from the root tsconfig.json, so it is never typechecked')
  return problems
}

function findManifests(dir: string): string[] {
  const found: string[] = []
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue
    const path = join(dir, name)
    if (name === 'package.json') found.push(path)
    else if (statSync(path).isDirectory()) found.push(...findManifests(path))
  }
  return found.sort()
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts')).map((name) => join(dir, name))
}

function rootReferences(root: string): Set<string> {
  const path = join(root, 'tsconfig.json')
  if (!existsSync(path)) return new Set()
  const config = readJson(path) as { references?: { path: string }[] }
  return new Set((config.references ?? []).map((reference) => reference.path.replace(/^\.\//, '').replace(/\/$/, '')))
}

/** `exports` as a published package needs it: every entry without the source condition. */
function published(exports: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (exports === undefined) return undefined
  return Object.fromEntries(Object.entries(exports).map(([key, value]) => [
    key,
    typeof value === 'object' && value !== null ? Object.fromEntries(Object.entries(value).filter(([condition]) => condition !== SOURCE_CONDITION)) : value,
  ]))
}

function readJson(path: string): Manifest {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Manifest
  } catch (error) {
    throw new Error(`${path}: cannot read JSON (${(error as Error).message})`, { cause: error })
  }
}
