/**
 * Which names stand for secrets: environment variables and config keys (`OPENAI_API_KEY`, `apiKey`,
 * `x-api-key`, `GITHUB_TOKEN`, `Authorization`, `dbPassword`), so their values are masked where
 * rein shows config and refused where rein would store them.
 */

/**
 * A word of a name (split at `_`, `-`, `.` and camelCase humps) that names a secret. `tokens` is
 * left out: `maxTokens` and `maxTokensField` are counts and settings, not credentials.
 */
const SECRET_WORD = /^(?:.*(?:key|secret|password|passwd|authorization|credential)s?|.*token)$/i
/** A name that says where a secret is read from (`apiKeyEnv: OPENAI_API_KEY`) holds no secret. */
const NAMES_A_VARIABLE = /Env(?:Var)?$/

/** Whether `name` (an environment variable or a config key) names a secret. */
export function isSecretName(name: string): boolean {
  if (NAMES_A_VARIABLE.test(name)) return false
  return name.replace(/([a-z\d])([A-Z])/g, '$1 $2').split(/[\s_.-]+/).some((word) => SECRET_WORD.test(word))
}

/** The environment variables named like secrets that hold something, by name. */
export function secretEnvironment(env: NodeJS.ProcessEnv): { name: string; value: string }[] {
  return Object.entries(env).flatMap(([name, value]) => (value !== undefined && value.trim() !== '' && isSecretName(name) ? [{ name, value }] : []))
}
