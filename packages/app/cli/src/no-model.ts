// Apart from composition.ts, so main.ts can word the error without loading the stack (`rein --help` loads none).

/** What to set when the built-in composition has no model (`NO_MODEL`), for the environment it was made from. */
export function noModelAdvice(env: NodeJS.ProcessEnv): string {
  if (env.OPENAI_BASE_URL) {
    return `no model configured for the server at OPENAI_BASE_URL (${env.OPENAI_BASE_URL}), which is the default provider when set: give --model <id> or set REIN_MODEL to one of its models`
  }
  return 'no model configured: set DEEPSEEK_API_KEY, or OPENAI_API_KEY (OPENAI_BASE_URL for a local OpenAI-compatible server, with --model or REIN_MODEL), or write a cordis.yml; rein demo shows the loop offline'
}
