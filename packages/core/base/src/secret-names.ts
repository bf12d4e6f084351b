/**
 * Which names stand for secrets: environment variables and config keys (`OPENAI_API_KEY`, `apiKey`,
 * `x-api-key`, `GITHUB_TOKEN`, `Authorization`, `dbPassword`, `Cookie`), so their values are masked where
 * rein shows config and refused where rein would store them.
 */

/**
 * A word of a name (split at `_`, `-`, `.` and camelCase humps) that names a secret. `tokens` is
 * left out: `maxTokens` and `maxTokensField` are counts and settings, not credentials; so is `pwd`,
 * which as `PWD` (and `HOST_PWD`, `ORIGINAL_PWD`) is a working directory.
 */
const SECRET_WORD = /^(?:.*(?:key|secret|password|passwd|passphrase|authorization|credential)s?|.*token)$/i
/** A name that says where a secret is read from (`apiKeyEnv: OPENAI_API_KEY`) holds no secret. */
const NAMES_A_VARIABLE = /Env(?:Var)?$/
/**
 * A cookie carries a session's credential (`cookie`, `set-cookie`, `sessionCookie`, `HTTP_COOKIE`),
 * but only as the name's last word, what the name holds: `cookies_enabled`, `cookieDomain` and
 * `COOKIE_PATH` are settings (a flag, a domain, a path), shown as they are. `session` alone is no
 * secret word: rein shows its own session ids; a `sessionToken` counts by its `token`. Likewise a
 * `pass` (`DB_PASS`, `smtpPass`) or `pw`, but not `passThrough`.
 */
const CREDENTIAL_LAST_WORD = /^(?:cookies?|pass|pw)$/i

/** Whether `name` (an environment variable or a config key) names a secret. */
export function isSecretName(name: string): boolean {
  if (NAMES_A_VARIABLE.test(name)) return false
  const words = name.replace(/([a-z\d])([A-Z])/g, '$1 $2').split(/[\s_.-]+/).filter((word) => word !== '')
  return words.some((word) => SECRET_WORD.test(word)) || CREDENTIAL_LAST_WORD.test(words.at(-1) ?? '')
}

/** The environment variables named like secrets that hold something, by name. */
export function secretEnvironment(env: NodeJS.ProcessEnv): { name: string; value: string }[] {
  return Object.entries(env).flatMap(([name, value]) => (value !== undefined && value.trim() !== '' && isSecretName(name) ? [{ name, value }] : []))
}
