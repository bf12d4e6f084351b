import { defineConfig } from 'tsdown'

// Two entries: the library surface and the `rein` executable.
export default defineConfig({ entry: ['src/index.ts', 'src/bin.ts'], format: 'esm', dts: true, platform: 'node', target: 'node20' })
