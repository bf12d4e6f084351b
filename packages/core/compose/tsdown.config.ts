import { defineConfig } from 'tsdown'
import shared from '../../../scripts/tsdown-package.ts'

// import-meta-resolve is a dev dependency that scripts/bundle-deps.mjs inlines after this build (six
// modules as one loads in about half the time, on every `rein run`); tsdown must leave it alone.
export default defineConfig({ ...shared, external: ['import-meta-resolve'] })
