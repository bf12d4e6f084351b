// @ts-check
/**
 * Bundles dependencies into a built entry, after tsdown has written it (`inlining()` in
 * scripts/tsdown-package.ts runs it when a build is done):
 *
 *   node scripts/bundle-deps.mjs <package folder> <entry in dist> <package-name prefix>...
 *
 * The imports of packages whose names start with a prefix are inlined into the entry (esbuild,
 * which wraps CommonJS for an ES module; a package's ES module build is preferred, so what is not
 * used can be left out); every other import stays as it is. Beside the entry it
 * writes THIRD-PARTY-NOTICES.txt: each inlined package's name, version and licence text, which
 * their licences ask a copy to carry. tsdown's own bundler mis-orders the wrapped CommonJS of
 * packages with two files of one name (a ReferenceError at load), hence esbuild here.
 */

import { spawnSync } from 'node:child_process'
import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { build } from 'esbuild'

const [folder, entry, ...prefixes] = process.argv.slice(2)
if (!folder || !entry || prefixes.length === 0) {
  console.error('usage: node scripts/bundle-deps.mjs <package folder> <entry in dist> <package-name prefix>...')
  process.exit(2)
}
const file = resolve(folder, entry)
const inlined = (/** @type {string} */ path) => prefixes.some((prefix) => path.startsWith(prefix))

/** esbuild's options; the banner gives inlined CommonJS the `require` an ES module lacks. */
const options = (/** @type {boolean} */ withRequire) => /** @type {import('esbuild').BuildOptions & { metafile: true }} */ ({
  entryPoints: [file],
  outfile: file,
  allowOverwrite: true,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // ES module builds where a package has one: what the entry does not use is dropped.
  mainFields: ['module', 'main'],
  sourcemap: true,
  metafile: true,
  logLevel: 'warning',
  ...(withRequire ? { banner: { js: "import { createRequire as createRequireForBundle } from 'node:module'\nconst require = createRequireForBundle(import.meta.url)" } } : {}),
  // Only the named packages come in; the workspace's own and every other dependency stay imports.
  plugins: [{
    name: 'keep-other-imports',
    setup(context) {
      context.onResolve({ filter: /^[^./]/ }, (args) => (inlined(args.path) ? undefined : { path: args.path, external: true }))
    },
  }],
})

// A dry run first, so the banner goes only where CommonJS comes in: an entry that inlines ES
// modules alone is left exactly as esbuild writes it.
const dryRun = await build({ ...options(false), write: false })
const inlinesCommonJs = Object.values(dryRun.metafile.inputs).some((input) => input.format === 'cjs')
const result = await build(options(inlinesCommonJs))
// The banner is text esbuild does not parse: make sure what was written still loads as a module.
const check = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' })
if (check.status !== 0) {
  console.error(`bundle-deps: ${entry} does not parse after bundling:\n${check.stderr}`)
  process.exit(1)
}

/** The package.json folder of each inlined file, once per package. */
const packageFolders = new Set()
for (const input of Object.keys(result.metafile.inputs)) {
  const at = input.lastIndexOf('node_modules/')
  if (at < 0) continue
  const parts = input.slice(at + 'node_modules/'.length).split('/')
  const name = parts[0]?.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
  if (name) packageFolders.add(resolve(input.slice(0, at + 'node_modules/'.length), name))
}

const notices = [...packageFolders].sort((a, b) => a.localeCompare(b)).map((packageFolder) => {
  const manifest = JSON.parse(readFileSync(join(packageFolder, 'package.json'), 'utf8'))
  // Every licence file (a package may have one per licence) and NOTICE, which Apache-2.0 asks copies to carry.
  const files = readdirSync(packageFolder).filter((name) => /^(licen[cs]e|notice|copying)/i.test(name)).sort((a, b) => a.localeCompare(b))
  const text = files.length > 0 ? files.map((name) => readFileSync(join(packageFolder, name), 'utf8').trim()).join('\n\n') : `License: ${manifest.license}`
  return `${manifest.name}@${manifest.version} (${manifest.license})\n\n${text}\n`
})
if (notices.length === 0) {
  // A prefix that matched nothing is a mistake in the build script, not a bundle to ship.
  console.error(`bundle-deps: nothing matching ${prefixes.join(', ')} was inlined into ${entry}`)
  process.exit(1)
}
writeFileSync(join(dirname(file), 'THIRD-PARTY-NOTICES.txt'), `${entry} includes the following packages.\n\n${notices.join(`\n${'-'.repeat(72)}\n\n`)}`)
console.log(`bundle-deps: ${notices.length} packages inlined into ${entry}`)
