// `pnpm soak`: the reliability suites at full size (run.mjs sets REIN_SOAK=full). The root config
// runs the same files at their fast size as part of `pnpm test`; this one differs only in what it
// includes and how long a test may take.
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'
import root from '../vitest.config.ts'

export default defineConfig({
  ...root,
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    ...root.test,
    include: ['soak/tests/**/*.test.ts'],
    testTimeout: 3_600_000,
    hookTimeout: 300_000,
  },
})
