import { defineConfig } from 'tsdown'
import shared from '../../../scripts/tsdown-package.ts'

// diff is a dev dependency that scripts/bundle-deps.mjs inlines after this build: the part the
// edits use, as one module, instead of its nineteen files at every start; tsdown must leave it alone.
export default defineConfig({ ...shared, external: ['diff'] })
