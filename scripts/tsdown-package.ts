// The one build config every package shares: ESM for Node 20 with bundled type declarations.
import { defineConfig } from 'tsdown'

export default defineConfig({
  entry: ['src/index.ts'],
  format: 'esm',
  dts: true,
  platform: 'node',
  target: 'node20',
})
