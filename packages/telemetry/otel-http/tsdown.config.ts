import { inlining } from '../../../scripts/tsdown-package.ts'

// The OpenTelemetry SDK is inlined into dist: file by file it cost every start 270-360 ms (README).
export default inlining('@opentelemetry/')
