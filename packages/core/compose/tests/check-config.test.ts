// configProblems over every schemastery shape a Config is built from; unknown keys never pass silently.
import Schema from '@deepseek-ai/schemastery'
import { describe, expect, it } from 'vitest'
import { configProblems } from '../src/check-config.ts'

interface Tree { name: string; children?: Tree[] }
const tree: Schema<Tree> = Schema.object({
  name: Schema.string().required(),
  children: Schema.array(Schema.lazy(() => tree)),
})

describe('configProblems', () => {
  it.each<[string, Schema, unknown, string[]]>([
    ['an object', Schema.object({ timeout: Schema.natural() }), { timeuot: 5 }, ['config.timeuot: unknown key; did you mean timeout?']],
    ['an object, case aside', Schema.object({ baseURL: Schema.string() }), { baseurl: 'x' }, ['config.baseurl: unknown key; did you mean baseURL?']],
    ['an object with nothing close', Schema.object({ a: Schema.string(), b: Schema.string() }), { zzz: 1 }, ['config.zzz: unknown key (the keys here are a, b)']],
    ['a nested object', Schema.object({ retry: Schema.object({ maxRetries: Schema.natural() }) }), { retry: { maxRetires: 1 } }, ['config.retry.maxRetires: unknown key; did you mean maxRetries?']],
    ['a dict of objects', Schema.dict(Schema.object({ url: Schema.string() })), { any: { url: 'x' }, other: { uri: 'y' } }, ['config.other.uri: unknown key; did you mean url?']],
    ['an array of objects', Schema.object({ models: Schema.array(Schema.object({ id: Schema.string() })) }), { models: [{ id: 'a' }, { id: 'b', idd: 1 }] }, ['config.models[1].idd: unknown key; did you mean id?']],
    ['a tuple', Schema.tuple([Schema.object({ host: Schema.string() }), Schema.number()]), [{ hots: 'x' }, 1], ['config[0].hots: unknown key; did you mean host?']],
    ['a union, on the member the value matches', Schema.union([Schema.string(), Schema.object({ path: Schema.string() })]), { path: 'x', mode: 1 }, ['config.mode: unknown key (the keys here are path)']],
    ['a union of objects, on the closest member', Schema.union([Schema.object({ kind: Schema.const('a'), size: Schema.number() }), Schema.object({ kind: Schema.const('b'), depth: Schema.number() })]), { kind: 'b', dept: 2 }, ['config.dept: unknown key; did you mean depth?']],
    ['an intersect, knowing every member\'s keys', Schema.intersect([Schema.object({ host: Schema.string() }), Schema.object({ port: Schema.number() })]), { host: 'h', port: 1, prot: 2 }, ['config.prot: unknown key; did you mean port?']],
    ['a transform', Schema.transform(Schema.object({ level: Schema.string() }), (value) => value), { levle: 'x' }, ['config.levle: unknown key; did you mean level?']],
    ['a recursive lazy schema', tree, { name: 'a', children: [{ name: 'b', children: [{ nmae: 'c' }] }] }, ['config.children[0].children[0].nmae: unknown key; did you mean name?', 'config.children[0].children[0].name: missing required value']],
    ['a dict key that needs quoting', Schema.dict(Schema.object({ on: Schema.boolean() })), { 'a.b': { of: true } }, ['config["a.b"].of: unknown key; did you mean on?']],
  ])('finds an unknown key in %s', (_label, schema, config, problems) => {
    expect(configProblems(config, schema)).toEqual(problems)
  })

  it.each<[string, Schema, unknown]>([
    ['a valid object with defaults left out', Schema.object({ a: Schema.string().default('x'), b: Schema.number().default(1) }), {}],
    ['a dict with any keys', Schema.dict(Schema.string()), { 'X-Any': 'y' }],
    ['any', Schema.object({ extra: Schema.any() }), { extra: { whatever: { deep: 1 } } }],
    ['false for a union with a const', Schema.object({ apiKeyEnv: Schema.union([Schema.string(), Schema.const(false)]) }), { apiKeyEnv: false }],
    ['an absent config', Schema.object({ a: Schema.string().default('x') }), undefined],
    ['a !!js value', Schema.object({ start: Schema.natural() }), { start: { __jsExpr: 'process.env.START' } }],
    ['a whole !!js config', Schema.object({ start: Schema.natural() }), { __jsExpr: '({ start: 1 })' }],
  ])('accepts %s', (_label, schema, config) => {
    expect(configProblems(config, schema)).toEqual([])
  })

  it('reports the type error schemastery finds, at its path, and leaves the config untouched', () => {
    const schema = Schema.object({ models: Schema.array(Schema.object({ id: Schema.string().required(), max: Schema.natural() })) })
    const config = { models: [{ id: 'a', max: 'lots' }] }
    expect(configProblems(config, schema)).toEqual(['config.models[0].max: expected number but got lots'])
    expect(config).toEqual({ models: [{ id: 'a', max: 'lots' }] })
  })

  it('reports a type error and an unknown key together', () => {
    const schema = Schema.object({ start: Schema.natural(), label: Schema.string() })
    expect(configProblems({ start: 'one', lable: 'x' }, schema)).toEqual([
      'config.lable: unknown key; did you mean label?',
      'config.start: expected number but got one',
    ])
  })

  it('skips a Config it cannot read', () => {
    expect(configProblems({ anything: 1 }, undefined)).toEqual([])
    expect(configProblems({ anything: 1 }, { not: 'a schema' })).toEqual([])
  })
})
