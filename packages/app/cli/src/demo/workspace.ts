/** The demo's workspace: a few files in a temporary folder, and two read-only tools over it. */

import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve, sep } from 'node:path'
import type { Context } from '@deepseek-ai/cordis'
import { defineTool, ReinError } from '@rein/tools'

const FILES: Record<string, string> = {
  'README.md': '# Lighthouse\n\nLighthouse watches a folder and reports files that changed since the last run.\nRun it with `lighthouse scan <folder>`.\n',
  'src/scan.ts': 'export function scan(folder: string) {\n  // compares modification times with the last snapshot\n}\n',
  'package.json': '{ "name": "lighthouse", "version": "0.3.0" }\n',
}

export async function createDemoWorkspace(): Promise<{ root: string; dispose(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'rein-demo-'))
  for (const [path, text] of Object.entries(FILES)) {
    await mkdir(dirname(join(root, path)), { recursive: true })
    await writeFile(join(root, path), text)
  }
  return { root, dispose: () => rm(root, { recursive: true, force: true }) }
}

/** Registers `list_files` and `read_file`, confined to `root`. */
export function registerDemoTools(ctx: Context, root: string) {
  const inside = (path: string) => {
    const full = resolve(root, path)
    if (full !== root && !full.startsWith(root + sep)) throw new ReinError('OUTSIDE_WORKSPACE', `${path} is outside the workspace`)
    return full
  }
  ctx.tools.register(defineTool({
    name: 'list_files',
    description: 'Lists the files in the workspace.',
    parameters: {},
    output: { schema: { type: 'array', items: { type: 'string' } }, render: (_args, files) => files.join('\n') },
    execute: async () => (await readdir(root, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => relative(root, join(entry.parentPath, entry.name)))
      .sort(),
    isConcurrencySafe: true,
    replaySafe: true,
  }))
  ctx.tools.register(defineTool({
    name: 'read_file',
    description: 'Reads a text file of the workspace.',
    parameters: { path: { type: 'string', required: true, description: 'relative to the workspace' } },
    output: { schema: { type: 'string' }, render: (_args, text) => text },
    execute: async (args) => readFile(inside(args.path), 'utf8'),
    isConcurrencySafe: true,
    replaySafe: true,
    presentCall: (args) => ({ card: 'read', title: `read ${args.path}`, path: args.path }),
  }))
}
