/**
 * Runs one `bash` call that prints `<bytes>` bytes of lines and reports this process's peak RSS
 * (VmHWM from /proc/self/status) as JSON. The memory test runs it with 50 MB; for the 1 GB figure:
 *
 *     npx tsx --conditions=@rein/source packages/tool/tool-bash/tests/rss/print-output.ts 1073741824
 */

import { readFileSync, rmSync, statSync } from 'node:fs'
import { Context } from '@deepseek-ai/cordis'
import ToolRegistry from '@rein/tools'
import { toolContextFixture } from '@rein/testkit'
import * as bash from '../../src/index.ts'

const bytes = Number(process.argv[2] ?? 1_000)
const kilobytes = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))?.[1])

const root = new Context()
await root.plugin(ToolRegistry, { askFor: [] })
await root.plugin(bash, {})
const run = toolContextFixture()
const before = kilobytes('VmRSS')
const result = await root.tools.execute({
  callId: 'rss',
  name: 'bash',
  arguments: JSON.stringify({ command: `yes 'a line of output, printed again and again' | head -c ${bytes}`, description: 'Print a lot' }),
  signal: new AbortController().signal,
  context: { spill: run.spill!, spillFolder: run.spillFolder! },
})
const value = result.isError ? undefined : result.value as { outputPath: string | null; exitCode: number | null }
console.log(JSON.stringify({
  bytes,
  rssBeforeKb: before,
  peakRssKb: kilobytes('VmHWM'),
  resultChars: result.content.map((part) => (part.type === 'text' ? part.text.length : 0)).reduce((a, b) => a + b, 0),
  exitCode: value?.exitCode,
  savedBytes: value?.outputPath ? statSync(value.outputPath).size : 0,
}))
rmSync(run.spillFolder!, { recursive: true, force: true })
process.exit(0)
