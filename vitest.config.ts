import { defaultServerConditions } from 'vite'
import { defineConfig } from 'vitest/config'

// Workspace packages resolve to their sources through this condition, in vitest and in the
// processes it forks (where cordis's loader imports plugins through Node itself, run by tsx).
const conditions = ['@rein/source', ...defaultServerConditions]

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['packages/*/*/tests/**/*.test.ts', 'examples/*/tests/**/*.test.ts', 'scripts/tests/**/*.test.ts', 'soak/tests/**/*.test.ts'],
    pool: 'forks',
    execArgv: ['--import', 'tsx'],
    typecheck: { enabled: false },
    // expect.poll waits for something that will happen (a child to exit, a screen to draw); on a
    // loaded two-core machine the default second is not always enough. A wait, not a timing check.
    expect: { poll: { timeout: 15_000 } },
  },
})
