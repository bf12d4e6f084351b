/** The demo's workspace: a few files, one with a typo, in a temporary folder. */

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

const FILES: Record<string, string> = {
  'README.md': '# Lighthouse\n\nLighthouse watches a folder and reports teh files that changed since the last run.\nRun it with `lighthouse scan <folder>`.\n',
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
