import { defineConfig } from 'tsdown'
import shared from '../../../scripts/tsdown-package.ts'

// Two entries: the service, and the approval row a cordis.yml names as `@rein/tools/approval`.
export default defineConfig({ ...shared, entry: ['src/index.ts', 'src/approval-plugin.ts'] })
