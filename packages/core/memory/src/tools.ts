/**
 * The model's side of memory: `memory_write`, `memory_search`, `memory_update`, `memory_forget`.
 * The session and project come from the call's run; the scopes from the agent (see access.ts).
 */

import type { Logger } from '@deepseek-ai/cordis'
import { ReinError, defineTool, type RunIdentity, type ToolCall, type ToolRun } from '@rein/tools'
import { accessFor, reaches } from './access.ts'
import type { MemoryConfig, MemoryScopes } from './config.ts'
import type { AgentsLike } from './section.ts'
import { age, clip } from './format.ts'
import { shielded } from './model-errors.ts'
import { renderSearchPage } from './search-page.ts'
import { normalizeContent } from './normalize.ts'
import { maskSecrets } from './secrets.ts'
import type { MemoryEntry, MemoryPatch, MemoryScope, MemoryType, RecallQuery, WriteResult, MemoryDraft } from './types.ts'
import { MEMORY_SCOPES, MEMORY_TYPES, checkContent, checkSameScope, hasWord, retired } from './validate.ts'

/** What the tools need from the service. */
export interface MemoryToolHost {
  write(draft: MemoryDraft): Promise<WriteResult>
  update(id: string, patch: MemoryPatch): Promise<MemoryEntry>
  forget(id: string): Promise<MemoryEntry>
  get(id: string): Promise<MemoryEntry | undefined>
  recall(query: RecallQuery): Promise<readonly MemoryEntry[]>
  projectIdFor(workspaceRoot: string): Promise<string>
}

const SCOPE = { type: 'string', enum: [...MEMORY_SCOPES] } as const
const TYPE = { type: 'string', enum: [...MEMORY_TYPES] } as const
const ID = { type: 'string', minLength: 1, maxLength: 100, description: 'The memory\'s id, e.g. "mem_3fKq9xZa1bQe".' } as const
const ENTRY_FIELDS = {
  id: { type: 'string', required: true },
  scope: { ...SCOPE, required: true },
  type: { ...TYPE, required: true },
} as const

/**
 * The four tools; `config` sets the content cap and search limits they declare, `agents` (ctx.agents,
 * when there) gives a live agent's own memory scopes, `logger` gets the store failures the model
 * reads only as "memory could not be used", `usable` says whether the store may still be used.
 */
export function createMemoryTools(memory: MemoryToolHost, config: MemoryConfig, agents: () => AgentsLike | undefined, logger: Logger, usable: () => boolean) {
  const content = { type: 'string', minLength: 1, maxLength: config.maxContentChars } as const
  // A run that may not read (or write) any scope never sees the tools that would only refuse it.
  // Nor does any run once the store is found damaged: the tools are removed only after the call
  // that found it ends, and the agent builds its next request (or, when the block's recall found
  // it, its first) before that.
  const readers = (identity: RunIdentity) => usable() && accessFor(config, identity, agents).read.length > 0
  const writers = (identity: RunIdentity) => usable() && accessFor(config, identity, agents).write.length > 0
  const off = () => !usable()
  const where = async (run: Pick<ToolRun, 'identity' | 'workspaceRoot'>): Promise<Where> => ({
    access: accessFor(config, run.identity, agents),
    projectId: await memory.projectIdFor(run.workspaceRoot),
  })
  const before: Prechecks = {
    memory_write: async (args, at) => {
      allowed(at.access, 'write', args.scope)
      checkContent('memory write', args.content, config.maxContentChars)
      if (args.supersedes === undefined) return undefined
      const target = await reachable(memory, args.supersedes, at.access.write, at.projectId)
      checkSameScope({ scope: args.scope, ...(args.scope === 'project' ? { projectId: at.projectId } : {}) }, target)
      // A superseded entry is corrected only by the same correction again (ctx.memory.write refuses
      // any other): nobody is asked about one that can only fail.
      if (target.retiredAt !== undefined && target.retiredBy !== undefined && !await rewrites(memory, target.retiredBy, args, at.projectId)) throw retired(target, 'supersede')
      return target
    },
    memory_update: async (args, at) => {
      if (args.content === undefined && args.type === undefined) throw new ReinError('INVALID_ARGS', 'memory_update needs content, type or both')
      if (args.content !== undefined) checkContent('memory update', args.content, config.maxContentChars)
      const entry = await reachable(memory, args.id, at.access.write, at.projectId)
      // A superseded entry is never rewritten (ctx.memory.update refuses it): nobody is asked about it.
      if (entry.retiredAt !== undefined) throw retired(entry, 'update')
      return entry
    },
    memory_forget: async (args, at) => reachable(memory, args.id, at.access.write, at.projectId),
  }

  const writeDescription = (scopes: readonly MemoryScope[]) => `Saves something worth knowing in later sessions. ${scopes.map((scope) => WRITE_SCOPE[scope]).join('; ')}. Write one self-contained statement of at most ${config.maxContentChars} characters; saving one you already have just refreshes it. To correct a memory, pass its id as supersedes: the old one is kept but never recalled again. Never save secrets.`
  const writeParameters = (scopes: readonly MemoryScope[]) => ({
    scope: { type: 'string', enum: [...scopes], required: true, description: `${scopes.map((scope) => SCOPE_IN_BRIEF[scope]).join(' or ')}.` },
    type: { ...TYPE, required: true, description: 'fact, preference, decision, episode (something that happened) or procedure (how to do something).' },
    content: { ...content, required: true, description: 'The statement, e.g. "Prefers pnpm over npm."' },
    supersedes: { ...ID, description: 'The id of a memory this one corrects.' },
  } as const)
  const memoryWrite = defineTool({
    name: 'memory_write',
    description: writeDescription(MEMORY_SCOPES),
    parameters: writeParameters(MEMORY_SCOPES),
    // An agent that may write one scope is offered only that one: a call it could only get refused is never suggested.
    variants: Object.fromEntries(MEMORY_SCOPES.map((scope) => [scope, { description: writeDescription([scope]), parameters: writeParameters([scope]) }])),
    variantFor: (identity) => onlyScope(accessFor(config, identity, agents).write),
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: { ...ENTRY_FIELDS, outcome: { type: 'string', enum: ['added', 'refreshed'], required: true }, supersedes: { type: 'string' } },
      },
      render: (_args, value) => {
        const saved = value.outcome === 'added' ? `Saved ${value.id} (${value.scope}, ${value.type}).` : `Already remembered as ${value.id} (${value.scope}, ${value.type}); refreshed it.`
        return value.supersedes === undefined ? saved : `${saved} ${value.supersedes} is superseded and will not be recalled again.`
      },
    },
    execute: (args, run) => shielded('memory_write', logger, off, async () => {
      const at = await where(run)
      await before.memory_write(args, at)
      const { projectId } = at
      const sessionId = run.identity?.sessionId ?? run.sessionId
      const { entry, outcome } = await memory.write({
        scope: args.scope,
        ...(args.scope === 'project' ? { projectId } : {}),
        type: args.type,
        content: args.content,
        // The anchor is the user message the run answers: where the thing remembered was said.
        source: { sessionId: sessionId ?? noSession(), ...(run.identity?.anchor ? { messageId: run.identity.anchor } : {}) },
        ...(args.supersedes === undefined ? {} : { supersedes: args.supersedes }),
      })
      return { ...fields(entry), outcome, ...(args.supersedes === undefined || args.supersedes === entry.id ? {} : { supersedes: args.supersedes }) }
    }),
    effects: ['write'],
    availableTo: writers,
    // Writing the same content again refreshes the entry it made: safe to run again after a crash.
    replaySafe: true,
    // Masked before it is cut: a tool line must not show a key memory refuses, nor its first half.
    presentCall: (args) => ({ card: 'generic', kind: 'edit', title: `Remember (${args.scope}, ${args.type})`, detail: clip(maskSecrets(args.content), 80) }),
  })

  const searchDescription = (about: string) => `Searches what was saved in earlier sessions (${about}) for the words of query, best match first. Each result shows its id, scope, type and age.`
  const query = { type: 'string', required: true, minLength: 1, maxLength: 500, description: 'Words to look for, e.g. "test runner".' } as const
  const searchFilters = {
    type: { ...TYPE, description: 'Only this type. Default: every type.' },
    limit: { type: 'integer', minimum: 1, maximum: config.maxRecall, default: Math.min(config.searchLimit, config.maxRecall), description: 'Most results.' },
  } as const
  const memorySearch = defineTool({
    name: 'memory_search',
    description: searchDescription('about the user and about this project'),
    parameters: { query, scope: { ...SCOPE, description: 'Only this scope. Default: both.' }, ...searchFilters },
    // An agent that may read one scope searches only it: no scope to choose.
    variants: Object.fromEntries(MEMORY_SCOPES.map((scope) => [scope, { description: searchDescription(SEARCHED[scope]), parameters: { query, ...searchFilters } }])),
    variantFor: (identity) => onlyScope(accessFor(config, identity, agents).read),
    output: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          entries: {
            type: 'array',
            required: true,
            items: { type: 'object', additionalProperties: false, properties: { ...ENTRY_FIELDS, content: { type: 'string', required: true }, age: { type: 'string', required: true } } },
          },
        },
      },
      render: (args, value) => value.entries.length === 0 ? `No memories match "${clip(args.query, 100)}".` : renderSearchPage(value.entries),
    },
    execute: (args, run) => shielded('memory_search', logger, off, async () => {
      // The service's own refusal tells callers they may leave query out; the tool requires it.
      if (!hasWord(args.query)) throw new ReinError('INVALID_ARGS', `memory_search refused: the query "${clip(args.query, 100)}" has no letters or digits to search for; give words, e.g. "test runner"`)
      const { access, projectId } = await where(run)
      if (args.scope !== undefined) allowed(access, 'read', args.scope)
      const scopes = args.scope === undefined ? access.read : [args.scope]
      if (scopes.length === 0) throw new ReinError('MEMORY_SCOPE_DENIED', 'this agent may not read memory', { details: { mode: 'read' } })
      const now = Date.now()
      const entries = await memory.recall({ scopes, projectId, query: args.query, ...(args.type === undefined ? {} : { types: [args.type] }), limit: args.limit, now })
      return { entries: entries.map((entry) => ({ ...fields(entry), content: entry.content, age: age(entry.updatedAt, now) })) }
    }),
    effects: ['read'],
    availableTo: readers,
    isConcurrencySafe: true,
    presentCall: (args) => ({ card: 'generic', kind: 'search', title: 'Search memory', detail: clip(args.query, 80) }),
  })

  const memoryUpdate = defineTool({
    name: 'memory_update',
    description: 'Rewrites a saved memory in place, by id: its content, its type, or both. For something that changed, prefer memory_write with supersedes, which keeps the old version dated.',
    parameters: {
      id: { ...ID, required: true },
      content: { ...content, description: 'The new statement.' },
      type: { ...TYPE, description: 'The new type.' },
    },
    output: {
      schema: { type: 'object', additionalProperties: false, properties: ENTRY_FIELDS },
      render: (_args, value) => `Updated ${value.id} (${value.scope}, ${value.type}).`,
    },
    execute: (args, run) => shielded('memory_update', logger, off, async () => {
      await before.memory_update(args, await where(run))
      const entry = await memory.update(args.id, { ...(args.content === undefined ? {} : { content: args.content }), ...(args.type === undefined ? {} : { type: args.type }) })
      return fields(entry)
    }),
    effects: ['write'],
    availableTo: writers,
    replaySafe: true,
    presentCall: (args) => ({ card: 'generic', kind: 'edit', title: 'Update memory', detail: args.id }),
  })

  const memoryForget = defineTool({
    name: 'memory_forget',
    description: 'Deletes a saved memory for good, by id. Use it when the user asks you to forget something, or a memory is wrong and nothing replaces it.',
    parameters: { id: { ...ID, required: true } },
    output: {
      schema: { type: 'object', additionalProperties: false, properties: { ...ENTRY_FIELDS, content: { type: 'string', required: true } } },
      render: (_args, value) => `Forgot ${value.id} (${value.scope}, ${value.type}): "${clip(value.content, 100)}".`,
    },
    execute: (args, run) => shielded('memory_forget', logger, off, async () => {
      await before.memory_forget(args, await where(run))
      const entry = await memory.forget(args.id)
      return { ...fields(entry), content: entry.content }
    }),
    effects: ['write'],
    availableTo: writers,
    presentCall: (args) => ({ card: 'generic', kind: 'delete', title: 'Forget memory', detail: args.id }),
  })

  return { memoryWrite, memorySearch, memoryUpdate, memoryForget, check: callCheck(before, where) }
}

/** Each scope as memory_write's description explains it to the model. */
const WRITE_SCOPE: Record<MemoryScope, string> = {
  user: 'scope "user": about the person, kept for every project (preferences, how they like to work)',
  project: 'scope "project": about this workspace only (decisions, conventions, facts, procedures)',
}
const SCOPE_IN_BRIEF: Record<MemoryScope, string> = { user: 'user (the person, every project)', project: 'project (this workspace)' }
const SEARCHED: Record<MemoryScope, string> = { user: 'about the user', project: 'about this project' }

/** The variant for an agent with exactly one scope (named after it); none for both. */
function onlyScope(scopes: readonly MemoryScope[]): MemoryScope | undefined {
  return scopes.length === 1 ? scopes[0] : undefined
}

/** Where a call runs: the scopes its agent has, and its project. */
interface Where {
  access: Readonly<MemoryScopes>
  projectId: string
}

/**
 * What each changing tool refuses before it changes anything (its agent's scopes, an entry it
 * cannot reach, a correction across scopes, content memory never keeps: a secret), and the entry
 * it would change. Run by the body, and by the policy before anyone is asked (see `callCheck`).
 */
interface Prechecks {
  memory_write(args: { scope: MemoryScope; type?: MemoryType; content: string; supersedes?: string }, at: Where): Promise<MemoryEntry | undefined>
  memory_update(args: { id: string; content?: string; type?: MemoryType }, at: Where): Promise<MemoryEntry>
  memory_forget(args: { id: string }, at: Where): Promise<MemoryEntry>
}

/**
 * For a validated call of a tool that changes memory: the entry it would change (`undefined`
 * when none), or the refusal its body would give (a `ReinError`, thrown). `undefined` for other
 * tools. The policy asks here first: a person must not be asked about a call that can only fail
 * (the yes would be for nothing), nor be shown a key the model tried to save.
 */
export type MemoryCallCheck = (call: ToolCall) => Promise<{ entry: MemoryEntry | undefined } | undefined>

function callCheck(before: Prechecks, where: (run: Pick<ToolRun, 'identity' | 'workspaceRoot'>) => Promise<Where>): MemoryCallCheck {
  return async (call) => {
    const { toolName, args } = call
    if (toolName === 'memory_write') {
      const scope = args.scope === 'user' || args.scope === 'project' ? args.scope : undefined
      if (scope === undefined || typeof args.content !== 'string') return undefined
      return { entry: await before.memory_write({ scope, ...typeOf(args), content: args.content, ...optionalText(args, 'supersedes') }, await where(call)) }
    }
    if (toolName !== 'memory_update' && toolName !== 'memory_forget') return undefined
    if (typeof args.id !== 'string') return undefined
    if (toolName === 'memory_forget') return { entry: await before.memory_forget({ id: args.id }, await where(call)) }
    return { entry: await before.memory_update({ id: args.id, ...optionalText(args, 'content'), ...typeOf(args) }, await where(call)) }
  }
}

/** `{type}` when the call's `type` is a memory type, else nothing. */
function typeOf(args: ToolCall['args']): { type?: MemoryType } {
  const type = MEMORY_TYPES.find((known) => known === args.type)
  return type === undefined ? {} : { type }
}

/**
 * Whether the call writes again the correction `retiredBy` (a replayed call): a live entry of the
 * call's scope, project and type with the same normalized content, which ctx.memory.write refreshes.
 */
async function rewrites(memory: MemoryToolHost, retiredBy: string, args: { scope: MemoryScope; type?: MemoryType; content: string }, projectId: string): Promise<boolean> {
  const by = await memory.get(retiredBy)
  if (by === undefined || by.retiredAt !== undefined || (by.expiresAt !== undefined && by.expiresAt <= Date.now())) return false
  const sameProject = args.scope === 'user' ? by.projectId === undefined : by.projectId === projectId
  return by.scope === args.scope && sameProject && by.type === args.type && normalizeContent(by.content) === normalizeContent(args.content)
}

/** `{[key]: value}` when the call's `key` is a string, else nothing. */
function optionalText<K extends string>(args: ToolCall['args'], key: K): { [P in K]?: string } {
  const value = args[key]
  return typeof value === 'string' ? ({ [key]: value } as { [P in K]?: string }) : {}
}

function allowed(access: Readonly<MemoryScopes>, mode: 'read' | 'write', scope: MemoryScope): void {
  if (access[mode].includes(scope)) return
  const may = access[mode].length === 0 ? `may not ${mode} memory` : `may ${mode} only ${access[mode].join(' and ')} memory`
  throw new ReinError('MEMORY_SCOPE_DENIED', `this agent ${may}, not ${scope} memory`, { details: { scope, mode } })
}

/** The entry, when this run may change it: another project's entry is not found, as if it were not there. */
async function reachable(memory: MemoryToolHost, id: string, scopes: readonly MemoryScope[], projectId: string): Promise<MemoryEntry> {
  const entry = await memory.get(id)
  if (entry === undefined || (entry.scope === 'project' && entry.projectId !== projectId)) {
    throw new ReinError('MEMORY_NOT_FOUND', `no memory ${id} here; memory_search finds ids`, { details: { id } })
  }
  if (!reaches(entry, scopes, projectId)) throw new ReinError('MEMORY_SCOPE_DENIED', `this agent may not change ${entry.scope} memory (${id})`, { details: { id, scope: entry.scope } })
  return entry
}

function fields(entry: MemoryEntry): { id: string; scope: MemoryScope; type: MemoryType } {
  return { id: entry.id, scope: entry.scope, type: entry.type }
}

function noSession(): never {
  throw new ReinError('NO_RUN_IDENTITY', 'memory_write records the session an entry came from: this call carries no session')
}
