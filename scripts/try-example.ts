// `pnpm example`: boots examples/cordis.yml, shows what the model would see, and runs the clock tool.
import { fileURLToPath } from 'node:url'
import { errorChain } from '@rein/base'
import { loadComposition } from '@rein/compose'
// The composition loads @rein/tools at run time; this import gives `ctx.tools` its type.
import type {} from '@rein/tools'

const file = fileURLToPath(new URL('../examples/cordis.yml', import.meta.url))
// Rows resolve from the example's folder (rein-tool-clock), then from the CLI's dependencies (the
// @rein/* packages), as `rein --config examples/cordis.yml` resolves them.
const resolveFrom = [fileURLToPath(new URL('../examples/', import.meta.url)), fileURLToPath(new URL('../packages/app/cli/', import.meta.url))]

try {
  const composition = await loadComposition({ file, resolveFrom })
  const { tools } = composition.ctx
  console.log(`Loaded ${file}: tools ${tools.list().join(', ')}`)
  console.log('\nThe model sees:')
  console.log(JSON.stringify(tools.schemas(), null, 2))
  const signal = new AbortController().signal
  for (const args of [{}, { timeZone: 'Asia/Tokyo' }, { timeZone: 'Mars/Olympus_Mons' }, { zone: 'UTC' }]) {
    const result = await tools.execute({ callId: 'example', name: 'current_time', arguments: JSON.stringify(args), signal })
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
    console.log(`\ncurrent_time ${JSON.stringify(args)}\n  ${result.isError ? `[${result.error.code}] ` : ''}${text}`)
  }
  await composition.dispose()
} catch (error) {
  console.error(errorChain(error))
  process.exitCode = 1
}
