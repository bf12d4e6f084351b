// The one build config every package shares: ESM for Node 20 with bundled type declarations.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { defineConfig, type UserConfig } from 'tsdown'

const shared = {
  entry: ['src/index.ts'],
  format: 'esm',
  dts: true,
  platform: 'node',
  target: 'node20',
} satisfies UserConfig

export default defineConfig(shared)

const bundleDeps = fileURLToPath(new URL('bundle-deps.mjs', import.meta.url))

/**
 * The shared config for a package whose `dist/index.mjs` carries the dependencies whose names start
 * with `prefixes` inside it: tsdown leaves their imports alone, then scripts/bundle-deps.mjs inlines
 * them (its header says why not tsdown). A failure there fails the build.
 */
export function inlining(...prefixes: string[]) {
  return defineConfig({
    ...shared,
    external: prefixes.map((prefix) => new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`)),
    hooks: {
      'build:done': ({ options }) => {
        execFileSync(process.execPath, [bundleDeps, options.cwd, 'dist/index.mjs', ...prefixes], { stdio: 'inherit' })
      },
    },
  })
}
