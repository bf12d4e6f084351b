import { defineConfig } from 'tsdown'
import shared from '../../../scripts/tsdown-package.ts'

// The OpenTelemetry SDK is a dev dependency that scripts/bundle-deps.mjs inlines after this build
// (see the README's Limitations); tsdown must leave its imports alone.
export default defineConfig({ ...shared, external: [/^@opentelemetry\//] })
