// Embedding rein in a Node program: compose it from rows in code, create an agent, send one
// message and stream what happens. Usage: node embed.mjs "What time is it in Tokyo?"
import { fileURLToPath } from 'node:url'
import { loadComposition } from '@rein/compose'

// The same rows a cordis.yml would list; plugin names resolve from this folder's node_modules.
const rows = [
  { id: 'llm', name: '@rein/llm' },
  {
    id: 'openai',
    name: '@rein/llm-openai',
    // Any OpenAI-compatible server. Without OPENAI_API_KEY no key is sent (a local server).
    config: { baseURL: process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1', apiKeyEnv: process.env.OPENAI_API_KEY ? 'OPENAI_API_KEY' : false },
  },
  { id: 'tools', name: '@rein/tools' },
  { id: 'clock', name: 'rein-tool-clock' },
  { id: 'sessions', name: '@rein/session' },
  // Each session is a file in $REIN_HOME/sessions, else ~/.rein/sessions.
  { id: 'store', name: '@rein/session-jsonl' },
  { id: 'agents', name: '@rein/agent', config: { provider: 'openai', model: process.env.REIN_MODEL || 'gpt-4o-mini' } },
]

// `file` names the rows in error messages. To load a cordis.yml instead: loadComposition({ file: 'cordis.yml' }).
const composition = await loadComposition({ file: fileURLToPath(import.meta.url), rows })
try {
  const agent = await composition.ctx.agents.create({ cwd: process.cwd() })
  agent.subscribe((event) => {
    if (event.type === 'text-delta') process.stdout.write(event.text)
    else if (event.type === 'tool-start') console.log(`[${event.name}] running`)
    else if (event.type === 'tool-end') console.log(`[${event.name}] ${event.isError ? `failed: ${event.code}` : 'done'}`)
  })
  const result = await agent.send(process.argv[2] || 'What time is it in Tokyo?')
  await agent.close()
  console.log(`\n[${result.reason}] session ${agent.session.id}: ${result.usage.inputTokens} tokens in, ${result.usage.outputTokens} out`)
  if (result.error) console.error(`${result.error.code}: ${result.error.message}`)
  process.exitCode = result.reason === 'completed' ? 0 : 1
} finally {
  await composition.dispose()
}
