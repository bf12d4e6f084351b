#!/usr/bin/env node
// The `rein` executable.
import { main } from './main.ts'
import { leaveOnceDone, processIo } from './io.ts'
import { reportStrayErrors } from './stray-errors.ts'
import { releaseHungUpTerminal } from './terminal-gone.ts'

const io = processIo()
const argv = process.argv.slice(2)
reportStrayErrors(io, argv.includes('--verbose') || argv.includes('-v'))
releaseHungUpTerminal()
process.exitCode = await main(argv, io)
// What a tool or plugin left running (a timer, a socket) does not keep the process once the command is done.
leaveOnceDone(io)
