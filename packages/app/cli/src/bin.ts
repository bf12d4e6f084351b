#!/usr/bin/env node
// The `rein` executable.
import { main } from './main.ts'
import { processIo } from './io.ts'

process.exitCode = await main(process.argv.slice(2), processIo())
