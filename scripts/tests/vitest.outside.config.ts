// `pnpm test:outside`: the tests that install the packed packages into a project outside this
// repository. They need `pnpm build && pnpm pack:all` first and take tens of seconds (npm install),
// so the root config leaves them out (`*.e2e.ts` is not `*.test.ts`).
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['scripts/tests/**/*.e2e.ts'],
    pool: 'forks',
    testTimeout: 180_000,
    hookTimeout: 60_000,
    typecheck: { enabled: false },
  },
})
