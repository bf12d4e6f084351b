// `pnpm constraints`: fails with one line per broken workspace rule (see workspace-constraints.ts).
import { fileURLToPath } from 'node:url'
import { checkWorkspace } from './workspace-constraints.ts'

const root = fileURLToPath(new URL('..', import.meta.url))
const problems = checkWorkspace(root)
if (problems.length > 0) {
  console.error(`workspace constraints: ${problems.length} problem${problems.length === 1 ? '' : 's'}`)
  for (const problem of problems) console.error(`  - ${problem}`)
  process.exit(1)
}
console.log('workspace constraints: ok')
