/**
 * Words for the messages a tool author reads when a definition is refused: what was given, and
 * what was probably meant (a JSON Schema where the DSL goes, a name with spaces).
 */

import { kindOf } from '@rein/base'

/** A value as a message shows it: a short string, number or boolean as written, anything else by kind. */
export function shown(value: unknown): string {
  if (typeof value === 'string' && value.length <= 40) return JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return kindOf(value)
}

/** A valid tool name close to `name` (`"my tool!"` → `"my_tool"`), or undefined when none is. */
export function suggestName(name: unknown): string | undefined {
  if (typeof name !== 'string') return undefined
  // Accents taken off first (NFKD splits é into e and a combining mark): café_search → cafe_search, not caf_search.
  const suggestion = name.normalize('NFKD').replace(/\p{M}+/gu, '').replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64)
  return suggestion === '' || suggestion === name ? undefined : suggestion
}

/**
 * For a definition key that says what the author wanted rather than misspelling a key: what to
 * write instead, as the tail of an "unknown key" message; else undefined.
 */
export function misplacedDefinitionKey(key: string, value: unknown): string | undefined {
  if (key === 'required') {
    const first = Array.isArray(value) && typeof value[0] === 'string' && /^[A-Za-z_$][\w$]*$/.test(value[0]) ? value[0] : 'text'
    return `: a definition has no required list; mark each required argument in parameters with required: true, e.g. {${first}: {type: 'string', required: true}}`
  }
  if (/approv/i.test(key)) {
    return ": approval follows from effects; declare what the tool does, e.g. effects: ['write'] (write and exec are asked about by default)"
  }
  return undefined
}

/**
 * Top-level keys of a JSON Schema object whose values no property spec can have (a spec is an
 * object), so a properties map with arguments named `type` or `required` is never mistaken for one.
 */
function jsonSchemaSigns(node: Record<string, unknown>): string[] {
  const signs: string[] = []
  if (typeof node.$schema === 'string') signs.push('"$schema"')
  if (typeof node.type === 'string') signs.push(`"type": ${JSON.stringify(node.type)}`)
  if (Array.isArray(node.required)) signs.push('a "required" list')
  if (typeof node.additionalProperties === 'boolean') signs.push(`"additionalProperties": ${node.additionalProperties}`)
  return signs
}

/** `{text: {type: 'string', required: true}}`, built from the schema's first property so the author sees their own. */
function propertiesExample(node: Record<string, unknown>): string {
  const properties = typeof node.properties === 'object' && node.properties !== null ? node.properties as Record<string, unknown> : {}
  const [name, spec] = Object.entries(properties)[0] ?? ['text', { type: 'string' }]
  const type = typeof (spec as Record<string, unknown> | null)?.type === 'string' ? (spec as Record<string, string>).type : 'string'
  const required = Array.isArray(node.required) && node.required.includes(name) ? ', required: true' : ''
  return `{${name}: {type: '${type}'${required}}}`
}

/**
 * When `parameters` is a JSON Schema rather than a map of property specs: a message saying what
 * `parameters` takes and how to pass a JSON Schema instead; otherwise undefined.
 */
export function jsonSchemaAsProperties(parameters: object): string | undefined {
  const node = parameters as Record<string, unknown>
  const signs = jsonSchemaSigns(node)
  if (signs.length === 0) return undefined
  // Wrapped in jsonSchema(), an object value spec would fail again: its `required: true` is no JSON Schema.
  const spec = objectSpecExample(node)
  if (spec) return `this is an object value spec ({type: 'object', properties: …}), but parameters is the properties map itself: write parameters: ${spec}, the specs that are under "properties"`
  const drop = typeof node.$schema === 'string' ? ' and drop "$schema"' : ''
  return `this is a JSON Schema (it has ${signs.join(', ')}), but parameters is a map from each argument's name to its spec, `
    + `e.g. ${propertiesExample(node)}; to pass a JSON Schema, wrap it in jsonSchema() from @rein/tools: `
    + `parameters: jsonSchema({type: 'object', properties: {…}, required: […]})${drop}`
}

/**
 * When `node` is the DSL's object value spec (`{type: 'object', properties}` whose properties mark
 * `required: true`, which a JSON Schema never does): its first property as the map to write, else undefined.
 */
function objectSpecExample(node: Record<string, unknown>): string | undefined {
  if (node.type !== 'object' || typeof node.properties !== 'object' || node.properties === null) return undefined
  const entries = Object.entries(node.properties as Record<string, unknown>)
  const isSpec = (spec: unknown) => typeof spec === 'object' && spec !== null && (spec as Record<string, unknown>).required === true
  const first = entries[0]
  if (!first || !entries.some(([, spec]) => isSpec(spec))) return undefined
  const [name, spec] = first
  const type = typeof (spec as Record<string, unknown>).type === 'string' ? (spec as Record<string, string>).type : 'string'
  return `{${name}: {type: '${type}'${isSpec(spec) ? ', required: true' : ''}}}`
}
