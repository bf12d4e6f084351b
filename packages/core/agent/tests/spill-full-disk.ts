/**
 * Run by spill.test.ts under `ulimit -f` (a file may grow no further: the write fails with EFBIG, as
 * on a full disk): spills a result bigger than the limit into the folder it is given.
 */

import { spillResult } from '../src/spill.ts'

// Without a handler the kernel's SIGXFSZ would end the process instead of failing the write.
process.on('SIGXFSZ', () => {})
const folder = process.argv[2] ?? ''
const session = { folder: async () => folder } as Parameters<typeof spillResult>[0]
try {
  await spillResult(session, 'c1', 'x'.repeat(1_000_000))
  process.stdout.write('saved\n')
} catch (error) {
  process.stdout.write(`failed ${String((error as NodeJS.ErrnoException).code)}\n`)
}
