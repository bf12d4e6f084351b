import { inlining } from '../../../scripts/tsdown-package.ts'

// diff is inlined into dist: the part the edits use, as one module, not its nineteen files at every start.
export default inlining('diff')
