/** @rein/cli: the `rein` command. Programmatic entry for embedding and tests. */

export { main } from './main.ts'
export { processIo, type Io } from './io.ts'
export { EXIT, type ExitCode } from './exit-codes.ts'
export { builtInRows } from './composition.ts'
export { reinHome } from './home.ts'
