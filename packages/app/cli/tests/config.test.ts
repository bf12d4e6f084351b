/**
 * Which composition `rein` uses (--config, ./cordis.yml, $REIN_HOME/cordis.yml, built in) and
 * `rein config`, which shows it with every secret masked (issue #9 §6).
 */

import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { maskSecrets, maskText, secretValues } from '@rein/base'
import { rein, spawnRein } from './harness.ts'

let dirs: string[] = []
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  dirs = []
})

/** A fresh folder with no node_modules: the plugins must come from rein's own dependencies. */
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rein-config-'))
  dirs.push(dir)
  return dir
}

/** A composition that only tells files apart: the tools row's timeout is the tag. */
function writeComposition(dir: string, tag: number, name = 'cordis.yml'): string {
  mkdirSync(dir, { recursive: true })
  const file = join(dir, name)
  writeFileSync(file, `- id: tools\n  name: '@rein/tools'\n  config: { defaultTimeoutMs: ${tag} }\n`)
  return file
}

interface Shown {
  source: string
  environment?: Record<string, boolean>
  rows: { id: string; name: string; disabled: boolean; config?: Record<string, unknown> }[]
}

async function shown(cwd: string, argv: string[], env: NodeJS.ProcessEnv): Promise<Shown> {
  const run = await rein(cwd, ['config', '--json', ...argv], { env })
  expect(run.code).toBe(0)
  // A built-in composition with no model says so (its own test below); nothing else is said.
  expect(run.stderr).toMatch(/^(rein: no model configured[^\n]*\n)?$/)
  return JSON.parse(run.stdout) as Shown
}

describe('rein config only reads', () => {
  it('creates no file, not even the memory database its composition names, in a REIN_HOME that does not exist yet', async () => {
    const root = folder()
    const home = join(root, 'home')
    const run = await spawnRein(root, ['config'], undefined, { REIN_HOME: home, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', REIN_MODEL: 'local-model' })
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(`row "memory-store" (@rein/memory-sqlite)\n  file: ${JSON.stringify(join(home, 'memory.db'))}`)
    expect(existsSync(home)).toBe(false)
    // A composition file's memory-sqlite row, the same.
    const file = join(root, 'cordis.yml')
    writeFileSync(file, `- id: memory\n  name: '@rein/memory'\n- id: memory-store\n  name: '@rein/memory-sqlite'\n  config: { file: '${join(root, 'db', 'memory.db')}' }\n`)
    expect((await spawnRein(root, ['config'], undefined, { REIN_HOME: home })).code).toBe(0)
    expect(readdirSync(root).sort()).toEqual(['cordis.yml'])
  }, 60_000)
})

describe('which cordis.yml rein uses', () => {
  it('takes ./cordis.yml, then $REIN_HOME/cordis.yml, then the built-in composition; --config beats them all', async () => {
    const project = folder()
    const home = folder()
    const elsewhere = folder()
    const local = writeComposition(project, 1111)
    const inHome = writeComposition(home, 2222)
    const chosen = writeComposition(join(elsewhere, 'conf'), 3333, 'mine.yml')
    const env = { REIN_HOME: home }
    expect((await shown(project, [], env)).source).toBe(local)
    expect((await shown(elsewhere, [], env)).source).toBe(inHome)
    expect((await shown(elsewhere, [], { REIN_HOME: folder() })).source).toBe('built-in')
    // Relative to the working directory, over a $REIN_HOME/cordis.yml; absolute, over a ./cordis.yml.
    const relative = await shown(elsewhere, ['--config', 'conf/mine.yml'], env)
    expect(relative.source).toBe(chosen)
    expect(relative.rows[0]?.config).toMatchObject({ defaultTimeoutMs: 3333 })
    expect((await shown(project, ['--config', chosen], env)).source).toBe(chosen)
  })

  it('fails with CONFIG_NOT_FOUND for a --config that does not exist, rather than falling back', async () => {
    const project = folder()
    writeComposition(project, 1111)
    const run = await rein(project, ['config', '--config', 'missing.yml'])
    expect(run.code).toBe(2)
    expect(run.stderr).toBe(`rein: CONFIG_NOT_FOUND: ${join(project, 'missing.yml')}: no such file\n`)
  })

  it('runs a $REIN_HOME/cordis.yml that has no node_modules beside it: rein\'s own packages resolve', async () => {
    const home = folder()
    writeFileSync(join(home, 'cordis.yml'), [
      "- { id: llm, name: '@rein/llm' }",
      "- { id: tools, name: '@rein/tools' }",
      "- { id: sessions, name: '@rein/session' }",
      "- { id: store, name: '@rein/session-jsonl' }",
      "- { id: agents, name: '@rein/agent', config: { provider: nowhere, model: m } }",
      '',
    ].join('\n'))
    const shownRows = await shown(folder(), [], { REIN_HOME: home })
    expect(shownRows.rows.map((row) => `${row.id} ${row.name}`)).toEqual([
      'llm @rein/llm', 'tools @rein/tools', 'sessions @rein/session', 'store @rein/session-jsonl', 'agents @rein/agent',
    ])
  })
})

describe('rein config', () => {
  it('prints the file and each row\'s id, plugin and the config it runs with, defaults filled in', async () => {
    const project = folder()
    const file = writeComposition(project, 4321)
    const run = await rein(project, ['config'])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe([
      `file ${file}`,
      '',
      'row "tools" (@rein/tools)',
      '  maxArgumentBytes: 1048576',
      '  maxArgumentDepth: 64',
      '  defaultTimeoutMs: 4321',
      '  askFor: ["write","exec"]',
      '',
    ].join('\n'))
  })

  it('names the built-in composition and the environment it was made from', async () => {
    const home = folder()
    const result = await shown(folder(), [], { REIN_HOME: home, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', REIN_MODEL: 'local-model' })
    expect(result.source).toBe('built-in')
    expect(result.environment).toEqual({ DEEPSEEK_API_KEY: false, OPENAI_API_KEY: false, OPENAI_BASE_URL: true, REIN_MODEL: true, REIN_HOME: true, OTEL_EXPORTER_OTLP_ENDPOINT: false, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: false, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: false })
    expect(result.rows.find((row) => row.id === 'agents')?.config).toMatchObject({ provider: 'openai', model: 'local-model' })
    expect(result.rows.find((row) => row.id === 'session-store')?.config).toMatchObject({ root: join(home, 'sessions') })
    // Memory is kept beside the sessions, in the REIN_HOME rein was given (never the process's ~/.rein).
    expect(result.rows.find((row) => row.id === 'memory-store')?.config).toEqual({ file: join(home, 'memory.db') })
    // Only shown: the database is made by the first command that uses memory.
    expect(existsSync(join(home, 'memory.db'))).toBe(false)
    // Undo is built in: checkpoints are recorded before the tool rows that write.
    expect(result.rows.map((row) => `${row.id} ${row.name}`)).toEqual([
      'llm @rein/llm', 'tools @rein/tools', 'sessions @rein/session', 'session-store @rein/session-jsonl',
      'memory @rein/memory', 'memory-store @rein/memory-sqlite',
      'checkpoints @rein/checkpoint', 'checkpoint-store @rein/checkpoint-jsonl',
      'fs @rein/tool-fs', 'jobs @rein/jobs', 'bash @rein/tool-bash', 'telemetry @rein/telemetry', 'openai @rein/llm-openai', 'agents @rein/agent',
      'subagents @rein/subagents',
    ])
    // Export to a collector only when the environment names one.
    const traced = await shown(folder(), [], { REIN_HOME: home, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })
    expect(traced.rows.map((row) => row.id)).toContain('otel')
    const text = await rein(folder(), ['config'], { env: { REIN_HOME: home } })
    expect(text.stdout).toMatch(/^built-in composition, made from DEEPSEEK_API_KEY \(not set\), OPENAI_API_KEY \(not set\), OPENAI_BASE_URL \(not set\), REIN_MODEL \(not set\), REIN_HOME \(set\), OTEL_EXPORTER_OTLP_ENDPOINT \(not set\), OTEL_EXPORTER_OTLP_TRACES_ENDPOINT \(not set\), OTEL_EXPORTER_OTLP_METRICS_ENDPOINT \(not set\)\n/)
  })

  it.each([
    [{}, false],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }, true],
    [{ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://127.0.0.1:4318/v1/metrics' }, true],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '' }, false],
  ])('puts the otel row in the built-in composition for %j: %s', async (otel, added) => {
    const { builtInRows } = await import('../src/index.ts')
    expect(builtInRows({ REIN_HOME: folder(), ...otel }).some((row) => row.id === 'otel')).toBe(added)
  })

  it('rein config with no model configured says so in one line, with the advice rein run gives', async () => {
    const home = join(folder(), 'home')
    const none = await rein(folder(), ['config'], { env: { REIN_HOME: home } })
    expect(none.code).toBe(0)
    expect(none.stderr).toBe('rein: no model configured: set DEEPSEEK_API_KEY, or OPENAI_API_KEY (OPENAI_BASE_URL for a local OpenAI-compatible server, with --model or REIN_MODEL), or write a cordis.yml; rein demo shows the loop offline\n')
    const local = await rein(folder(), ['config'], { env: { REIN_HOME: home, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } })
    expect(local.stderr).toBe('rein: no model configured for the server at OPENAI_BASE_URL (http://127.0.0.1:9/v1), which is the default provider when set: give --model <id> or set REIN_MODEL to one of its models\n')
    // As rein run says it: the URL's password and its key-named query value masked.
    const credentials = await rein(folder(), ['config'], { env: { REIN_HOME: home, OPENAI_BASE_URL: 'http://user:s3cr3tpassw0rd@127.0.0.1:9/v1?api_key=abcdefghijklmnopqrstuvwxyz' } })
    expect(credentials.stderr).toBe('rein: no model configured for the server at OPENAI_BASE_URL (http://***@127.0.0.1:9/v1?api_key=***), which is the default provider when set: give --model <id> or set REIN_MODEL to one of its models\n')
    const named = await rein(folder(), ['config'], { env: { REIN_HOME: home, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', REIN_MODEL: 'm1' } })
    expect(named.stderr).toBe('')
  })

  it('never prints a secret: values under secret-named keys, and any value of a secret-named variable', async () => {
    const project = folder()
    const secrets = {
      OPENAI_API_KEY: 'sk-test-0123456789abcdef',
      GATEWAY_TOKEN: 'gw-secret-token-value',
      DB_PASSWORD: 'hunter2-hunter2',
    }
    writeFileSync(join(project, 'cordis.yml'), [
      "- { id: llm, name: '@rein/llm' }",
      '- id: openai',
      "  name: '@rein/llm-openai'",
      '  config:',
      '    label: !!js process.env.DB_PASSWORD',
      '    headers:',
      "      Authorization: !!js \"'Bearer ' + process.env.OPENAI_API_KEY\"",
      '      X-Gateway: !!js process.env.GATEWAY_TOKEN',
      "      X-Trace: !!js \"'trace-' + process.env.GATEWAY_TOKEN\"",
      '      X-Literal-Key: written-in-the-file',
      '',
    ].join('\n'))
    for (const argv of [['config'], ['config', '--json']]) {
      const run = await spawnRein(project, argv, undefined, secrets)
      expect(run.code).toBe(0)
      for (const secret of [...Object.values(secrets), 'written-in-the-file']) {
        expect(run.stdout).not.toContain(secret)
        expect(run.stderr).not.toContain(secret)
      }
      expect(run.stdout).toContain('***')
    }
    const json = JSON.parse((await spawnRein(project, ['config', '--json'], undefined, secrets)).stdout) as Shown
    expect(json.rows.find((row) => row.id === 'openai')?.config).toMatchObject({
      label: '***',
      // The variable's name is no secret: shown, so the user sees where the key is read from.
      apiKeyEnv: 'OPENAI_API_KEY',
      headers: { 'Authorization': '***', 'X-Gateway': '***', 'X-Trace': '***', 'X-Literal-Key': '***' },
      // A setting whose name only mentions tokens is shown.
      maxTokensField: 'max_tokens',
      streamIdleTimeoutMs: 300000,
    })
  })

  it.each([
    ['a secret variable read into a field whose check quotes it', "    baseURL: !!js process.env.OPENAI_API_KEY", {}],
    ['a header YAML reads as a number', '    headers: { x-api-key: 98765432109876543 }', {}],
    ['a password in a URL without a scheme it speaks', "    baseURL: 'htps://alice:hunter2pass@127.0.0.1:9/v1'", {}],
    ['a password in OPENAI_BASE_URL, named by the no-model error', null, { OPENAI_BASE_URL: 'http://alice:hunter2pass@127.0.0.1:9/v1?api_key=zzzsecretzzz' }],
  ])('never prints a secret in the error line: %s', async (_case, line, extra) => {
    const project = folder()
    const secret = 'sk-proj-SUPERSECRET0123456789'
    if (line !== null) {
      writeFileSync(join(project, 'cordis.yml'), ["- { id: llm, name: '@rein/llm' }", '- id: openai', "  name: '@rein/llm-openai'", '  config:', line, ''].join('\n'))
    }
    const run = await spawnRein(project, line === null ? ['run', 'hi'] : ['config'], undefined, { OPENAI_API_KEY: secret, ...extra })
    expect(run.code).not.toBe(0)
    expect(run.stderr).toMatch(/^rein: /)
    for (const hidden of [secret, 'hunter2pass', '98765432109876', 'zzzsecretzzz']) expect(run.stderr).not.toContain(hidden)
  })

  it('masks by the words of a key\'s name, not by any substring: a token count is no token', () => {
    const config = {
      apiKey: 'a', 'x-api-key': 'b', APIKey: 'c', GITHUB_TOKEN: 'd', accessToken: 'e', Authorization: 'f',
      dbPassword: 'g', clientSecret: 'h', credentials: { user: 'i' }, signingKeys: ['j'],
      maxTokens: 'k', maxTokensField: 'max_tokens', keyboard: 'qwerty', label: 'l', retries: 3,
    }
    expect(maskSecrets(config, [])).toEqual({
      apiKey: '***', 'x-api-key': '***', APIKey: '***', GITHUB_TOKEN: '***', accessToken: '***', Authorization: '***',
      dbPassword: '***', clientSecret: '***', credentials: { user: '***' }, signingKeys: ['***'],
      maxTokens: 'k', maxTokensField: 'max_tokens', keyboard: 'qwerty', label: 'l', retries: 3,
    })
    const secrets = secretValues({ MY_API_KEY: ' long-secret-value ', SHORT_TOKEN: '7', MAX_TOKENS: '4096', HOME: '/home/u' })
    expect(maskSecrets({ a: 'long-secret-value', b: 'Bearer long-secret-value', c: '7', d: 'v1.7', e: '4096', f: '/home/u' }, secrets))
      .toEqual({ a: '***', b: 'Bearer ***', c: '***', d: 'v1.7', e: '4096', f: '/home/u' })
  })

  it('masks every value under headers, whatever the header is called (x-honeycomb-team, uptrace-dsn)', () => {
    const config = { endpoint: 'https://api.honeycomb.io', headers: { 'x-honeycomb-team': 'hcaik_01SECRET', 'uptrace-dsn': 'https://tok@uptrace.dev/1', 'x-scope': 'eu', 'x-api-key': 12345678901234 } }
    expect(maskSecrets(config, [])).toEqual({ endpoint: 'https://api.honeycomb.io', headers: { 'x-honeycomb-team': '***', 'uptrace-dsn': '***', 'x-scope': '***', 'x-api-key': '***' } })
  })

  it('masks credentials inside URLs, and shows which variable a key is read from', () => {
    const config = {
      baseURL: 'https://user:hunter2pass@example.invalid/v1?api_key=literal-in-url-123&region=eu',
      proxy: 'http://:only-password@proxy.invalid:8080',
      apiKeyEnv: 'OPENAI_API_KEY',
      plain: 'https://example.invalid/v1?page=2',
    }
    expect(maskSecrets(config, [])).toEqual({
      baseURL: 'https://***@example.invalid/v1?api_key=***&region=eu',
      proxy: 'http://***@proxy.invalid:8080',
      apiKeyEnv: 'OPENAI_API_KEY',
      plain: 'https://example.invalid/v1?page=2',
    })
    // In a sentence, the punctuation after the URL stays.
    expect(maskText('the server at OPENAI_BASE_URL (http://a:b@h/v1?api_key=zzz), which', [])).toBe('the server at OPENAI_BASE_URL (http://***@h/v1?api_key=***), which')
  })

  it('shows a URL as the provider shows it: a key in its path and a query value as long as a key are masked too', () => {
    const config = {
      gateway: 'http://127.0.0.1:8080/v1/key/sk-test-0123456789abcdefghij',
      shapedSegment: 'http://127.0.0.1:8080/sk-test-0123456789abcdefghij/v1',
      namedSegment: 'https://gw.invalid/token/abcdef123/v1',
      longQuery: 'https://blob.invalid/v1?sig=abcdefABCDEF0123456789xyz&sv=2024-10-21',
      bareQuery: 'https://gw.invalid/v1?abcdefABCDEF0123456789xyz',
      plain: 'https://gw.invalid/deployments/gpt-4o-prod/v1?api-version=2024-10-21',
    }
    expect(maskSecrets(config, [])).toEqual({
      gateway: 'http://127.0.0.1:8080/v1/key/***',
      shapedSegment: 'http://127.0.0.1:8080/***/v1',
      namedSegment: 'https://gw.invalid/token/***/v1',
      longQuery: 'https://blob.invalid/v1?sig=***&sv=2024-10-21',
      bareQuery: 'https://gw.invalid/v1?***',
      plain: 'https://gw.invalid/deployments/gpt-4o-prod/v1?api-version=2024-10-21',
    })
    expect(maskSecrets({ v6: 'http://[::1]:8080/v1/key/sk-abcdefghijklmnopqrstuvwxyz', hash: 'https://app.invalid/cb#access_token=ya29abcdefghijklmnopqrstu&token_type=bearer' }, []))
      .toEqual({ v6: 'http://[::1]:8080/v1/key/***', hash: 'https://app.invalid/cb#access_token=***&token_type=***' })
    // Only a value that is a whole web URL: in free text (a message the model reads) a path after
    // keys/ or a long search is most often no key, and the URL is needed whole.
    const prose = 'see file:///home/me/src/keys/loader.ts:12 and https://github.com/o/r/tree/main/api/keys/rotate.ts?q=maskUrlText+repo%3Arein'
    expect(maskText(prose, [])).toBe(prose)
    expect(maskSecrets({ file: 'file:///home/me/src/keys/loader.ts' }, [])).toEqual({ file: 'file:///home/me/src/keys/loader.ts' })
  })

  it('refuses an unknown --allow effect, listing the valid ones', async () => {
    const run = await rein(folder(), ['run', '--allow', 'write,delete', 'x'])
    expect(run).toMatchObject({ code: 2, stderr: 'rein: --allow takes a comma-separated list of effects (read, write, exec, network), not "delete"\n' })
  })
})
